package onedevice

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxKeyLen bounds a Mapper's key (ucxmp.MaxKeyLen, the same bound the
// push protocol's clear-to-send has).
const MaxKeyLen = 128

// The call's two messages, on tags of their own (see Call).
const (
	tagArrive = 0
	tagFinish = 1
)

// arrive is a rank's ARRIVE message: its two buffers as the leader maps
// them, or why it cannot export them.
//
//	[0:4]   status (0 ok, 1 cannot export: the reason follows the header)
//	[4:8]   key lengths: src (16 bits), dst (16 bits)
//	[8:16]  src offset in its allocation   [16:24] src length
//	[24:32] dst offset                     [32:40] dst length
//	[40:]   src key, then dst key (or the reason)
const arriveLen = 40 + 2*MaxKeyLen

// finish is the leader's FINISH message: [0:4] status (0 ok, 1 failed, 2
// the buffers cannot be mapped: run the call another way), [4:8] the
// reason's length, then the reason.
const finishLen = 8 + 248

const (
	statusOK       = 0
	statusFailed   = 1
	statusUnmapped = 2
)

// ErrUnmapped is in the error of a call whose buffers the leader could not
// map (a rank could not export them, or rank 0 could not open them): every
// rank gets it alike, nothing was written, and the caller may run the
// collective another way (the team layer runs sched's message form).
var ErrUnmapped = errors.New("the leader cannot map every rank's buffers")

// unmapped marks a reason as ErrUnmapped.
type unmapped struct{ err error }

func (u unmapped) Error() string   { return u.err.Error() }
func (u unmapped) Unwrap() []error { return []error{ErrUnmapped, u.err} }

type bufferKey struct {
	key      []byte
	off, len int64
}

func putArrive(b []byte, src, dst bufferKey) {
	clear(b)
	binary.LittleEndian.PutUint16(b[4:], uint16(len(src.key)))
	binary.LittleEndian.PutUint16(b[6:], uint16(len(dst.key)))
	binary.LittleEndian.PutUint64(b[8:], uint64(src.off))
	binary.LittleEndian.PutUint64(b[16:], uint64(src.len))
	binary.LittleEndian.PutUint64(b[24:], uint64(dst.off))
	binary.LittleEndian.PutUint64(b[32:], uint64(dst.len))
	copy(b[40:], src.key)
	copy(b[40+len(src.key):], dst.key)
}

func putArriveFailed(b []byte, reason string) {
	clear(b)
	binary.LittleEndian.PutUint32(b, statusFailed)
	binary.LittleEndian.PutUint16(b[4:], uint16(copy(b[40:], reason)))
}

// readArrive decodes rank's ARRIVE; the keys alias b.
func readArrive(b []byte, rank int) (src, dst bufferKey, err error) {
	sl, dl := int(binary.LittleEndian.Uint16(b[4:])), int(binary.LittleEndian.Uint16(b[6:]))
	if binary.LittleEndian.Uint32(b) != statusOK {
		return src, dst, fmt.Errorf("rank %d cannot export its buffers: %s", rank, b[40:40+min(sl, 2*MaxKeyLen)])
	}
	if sl > MaxKeyLen || dl > MaxKeyLen {
		return src, dst, fmt.Errorf("rank %d sent keys of %d and %d bytes, at most %d each", rank, sl, dl, MaxKeyLen)
	}
	src = bufferKey{key: b[40 : 40+sl], off: int64(binary.LittleEndian.Uint64(b[8:])), len: int64(binary.LittleEndian.Uint64(b[16:]))}
	dst = bufferKey{key: b[40+sl : 40+sl+dl], off: int64(binary.LittleEndian.Uint64(b[24:])), len: int64(binary.LittleEndian.Uint64(b[32:]))}
	return src, dst, nil
}

func putFinish(b []byte, err error) {
	clear(b)
	if err == nil {
		return
	}
	status := uint32(statusFailed)
	if errors.Is(err, ErrUnmapped) {
		status = statusUnmapped
	}
	binary.LittleEndian.PutUint32(b, status)
	binary.LittleEndian.PutUint32(b[4:], uint32(copy(b[8:], err.Error())))
}

func readFinish(b []byte) error {
	status := binary.LittleEndian.Uint32(b)
	if status == statusOK {
		return nil
	}
	n := min(int(binary.LittleEndian.Uint32(b[4:])), len(b)-8)
	err := fmt.Errorf("rank 0 (the leader) failed the call: %s", b[8:8+n])
	if status == statusUnmapped {
		return unmapped{err}
	}
	return err
}
