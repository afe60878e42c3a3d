package team

import (
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/exec"
)

// Error kinds that map onto goring_status_t (StatusOf).
type (
	invalidErr      struct{ error } // GORING_ERR_INVALID
	resourceErr     struct{ error } // GORING_ERR_NO_RESOURCE
	notSupportedErr struct{ error } // GORING_ERR_NOT_SUPPORTED
)

func (e invalidErr) Unwrap() error      { return e.error }
func (e resourceErr) Unwrap() error     { return e.error }
func (e notSupportedErr) Unwrap() error { return e.error }

func NotSupported(format string, args ...any) error {
	return notSupportedErr{fmt.Errorf(format, args...)}
}

func Invalid(format string, args ...any) error {
	return invalidErr{fmt.Errorf(format, args...)}
}

// Status is an outcome as the C API reports it: goring_status_t's numbers
// (ucc_tl_goring/goring.h).
type Status int

// The outcomes, as in ucc_tl_goring/goring.h.
const (
	StatusOK           Status = 0
	StatusInProgress   Status = 1
	StatusNotSupported Status = -1
	StatusInvalid      Status = -2
	StatusNoMemory     Status = -3
	StatusNoResource   Status = -4
	StatusTimeout      Status = -5
	StatusInternal     Status = -6
	StatusDeclined     Status = -7
)

// StatusOf classifies err.
func StatusOf(err error) Status {
	var (
		inv invalidErr
		res resourceErr
		ns  notSupportedErr
	)
	switch {
	case err == nil:
		return StatusOK
	case errors.Is(err, ErrDeclined):
		return StatusDeclined
	case errors.As(err, &ns):
		return StatusNotSupported
	case errors.As(err, &inv):
		return StatusInvalid
	case errors.As(err, &res):
		return StatusNoResource
	case errors.Is(err, exec.ErrDeadline):
		return StatusTimeout
	}
	return StatusInternal
}

var errFinalized = errors.New("collective finalized while in flight")

// errPeerFailed is the cause of a collective ended by a peer that died.
var errPeerFailed = errors.New("peer failed")
