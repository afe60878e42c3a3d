package crossmem

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The call's messages, each on a tag of its own (see Call).
const (
	tagArrive  = 0
	tagVerdict = 1
	tagDone    = 2
)

// msgLen is every message's length: a header and room for a reason.
const msgLen = 256

// arrive is a rank's ARRIVE message:
//
//	[0:4]   status (0 ok, 1 this rank cannot take part: the reason at [64:])
//	[4:8]   the reason's length
//	[8:16]  the process's id (Reader.Pid)
//	[16:24] the address of the team's cookie (8 bytes)
//	[24:32] source address     [32:40] source length
//	[40:48] result address     [48:56] result length
//	[56:64] the cookie's value, for the verdict
//
// A word (VERDICT, DONE) is [0:4] status (0 ok, 1 failed), [4:8]
// the reason's length, then the reason.
type arrive struct {
	pid        int64
	cookieAddr uint64
	cookie     uint64
	src, dst   uint64 // addresses
	srcLen     int64
	dstLen     int64
}

const (
	statusOK     = 0
	statusFailed = 1
	arriveReason = 64
	wordReason   = 8
)

func putArrive(b []byte, a arrive) {
	clear(b)
	le := binary.LittleEndian
	le.PutUint64(b[8:], uint64(a.pid))
	le.PutUint64(b[16:], a.cookieAddr)
	le.PutUint64(b[24:], a.src)
	le.PutUint64(b[32:], uint64(a.srcLen))
	le.PutUint64(b[40:], a.dst)
	le.PutUint64(b[48:], uint64(a.dstLen))
	le.PutUint64(b[56:], a.cookie)
}

func readArrive(b []byte) (arrive, error) {
	le := binary.LittleEndian
	if le.Uint32(b) != statusOK {
		return arrive{}, errors.New(reason(b, arriveReason))
	}
	return arrive{pid: int64(le.Uint64(b[8:])), cookieAddr: le.Uint64(b[16:]), src: le.Uint64(b[24:]),
		srcLen: int64(le.Uint64(b[32:])), dst: le.Uint64(b[40:]), dstLen: int64(le.Uint64(b[48:])),
		cookie: le.Uint64(b[56:])}, nil
}

// putFailed writes a failed ARRIVE (at = arriveReason) or word (at =
// wordReason) with err's text, cut to fit.
func putFailed(b []byte, at int, err error) {
	clear(b)
	binary.LittleEndian.PutUint32(b, statusFailed)
	binary.LittleEndian.PutUint32(b[4:], uint32(copy(b[at:], err.Error())))
}

func putWord(b []byte, err error) {
	if err != nil {
		putFailed(b, wordReason, err)
		return
	}
	clear(b[:wordReason])
}

func readWord(b []byte) error {
	if binary.LittleEndian.Uint32(b) == statusOK {
		return nil
	}
	return errors.New(reason(b, wordReason))
}

func reason(b []byte, at int) string {
	n := min(int(binary.LittleEndian.Uint32(b[4:])), len(b)-at)
	return string(b[at : at+n])
}

// ErrUnreadable is in the error of a call some rank could not read a
// peer's memory for, on the team's first call: every rank gets it alike,
// nothing was written, and the caller may run the collective another way.
var ErrUnreadable = errors.New("the ranks cannot read each other's memory")

type unreadable struct{ err error }

func (u unreadable) Error() string   { return u.err.Error() }
func (u unreadable) Unwrap() []error { return []error{ErrUnreadable, u.err} }

func rankErr(rank int, err error) error { return fmt.Errorf("rank %d: %w", rank, err) }
