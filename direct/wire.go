package direct

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
	kinds      = 3
)

// msgLen is every message's length: a header, then an ARRIVE's names of
// the buffers or a word's reason.
//
//	[0:4]   status: 0 ok, 1 failed, 2 the buffers cannot be reached
//	        (every rank ends alike with the backend's fallback error)
//	[4:8]   the reason's length (status not 0: the reason at [8:])
//
// ARRIVE, status 0:
//
//	[8:16]  source length   [16:24] result length
//	[24:]   the backend's names of the buffers (bodyAt)
//
// A word (VERDICT, DONE) is the status and the reason.
const msgLen = 320

const (
	statusOK       = 0
	statusFailed   = 1
	statusFallback = 2
	reasonAt       = 8
	bodyAt         = 24
)

var le = binary.LittleEndian

// putArrive writes this rank's ARRIVE header; the backend writes the
// body at bodyAt.
func putArrive(b []byte, srcLen, dstLen int64) {
	clear(b)
	le.PutUint64(b[8:], uint64(srcLen))
	le.PutUint64(b[16:], uint64(dstLen))
}

// arriveLens are an ARRIVE's lengths, or why its rank cannot take part.
func arriveLens(b []byte) (srcLen, dstLen int64, err error) {
	if err := readWord(b); err != nil {
		return 0, 0, err
	}
	return int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:])), nil
}

// putWord writes a word: ok for nil, else err's reason, cut to fit, with
// the status fallback where err is the backend's fallback.
func putWord(b []byte, err error, fallback error) {
	clear(b[:reasonAt])
	if err == nil {
		return
	}
	clear(b)
	status := uint32(statusFailed)
	if errors.Is(err, fallback) {
		status = statusFallback
	}
	le.PutUint32(b, status)
	le.PutUint32(b[4:], uint32(copy(b[reasonAt:], err.Error())))
}

// wordErr is a word's outcome: nil, or its reason, marked fallback where
// the sender said so.
type wordErr struct {
	reason   string
	fallback bool
}

func (w *wordErr) Error() string { return w.reason }

func readWord(b []byte) error {
	status := le.Uint32(b)
	if status == statusOK {
		return nil
	}
	n := min(int(le.Uint32(b[4:])), len(b)-reasonAt)
	return &wordErr{reason: string(b[reasonAt : reasonAt+n]), fallback: status == statusFallback}
}

// isFallback reports whether err is a word that said fallback.
func isFallback(err error) bool {
	var w *wordErr
	return errors.As(err, &w) && w.fallback
}

// ErrUnmapped is in the error of a device call whose buffers the leader
// could not map (a rank could not export them, or rank 0 could not open
// them): every rank gets it alike, nothing was written, and the caller
// may run the collective another way (the team layer runs sched's
// message form).
var ErrUnmapped = errors.New("the leader cannot map every rank's buffers")

// ErrUnreadable is in the error of a host call some rank could not read a
// peer's memory for, on the team's first call: every rank gets it alike,
// nothing was written, and the caller may run the collective another way.
var ErrUnreadable = errors.New("the ranks cannot read each other's memory")

// fallback marks err as a backend's sentinel (ErrUnmapped, ErrUnreadable).
type fallback struct {
	sentinel, err error
}

func (f fallback) Error() string   { return f.err.Error() }
func (f fallback) Unwrap() []error { return []error{f.sentinel, f.err} }

func rankErr(rank int, err error) error { return fmt.Errorf("rank %d: %w", rank, err) }
