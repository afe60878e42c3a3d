//go:build ucc

package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/goring-hpc/goring/exec"
)

// Error kinds that map onto goring_status_t (see status in capi.go).
type (
	invalidErr      struct{ error } // GORING_ERR_INVALID
	resourceErr     struct{ error } // GORING_ERR_NO_RESOURCE
	notSupportedErr struct{ error } // GORING_ERR_NOT_SUPPORTED
)

func (e invalidErr) Unwrap() error      { return e.error }
func (e resourceErr) Unwrap() error     { return e.error }
func (e notSupportedErr) Unwrap() error { return e.error }

func notSupported(format string, args ...any) error {
	return notSupportedErr{fmt.Errorf(format, args...)}
}

func invalid(format string, args ...any) error {
	return invalidErr{fmt.Errorf(format, args...)}
}

// Status codes, as in cshim/goring.h.
const (
	statusOK           = 0
	statusInProgress   = 1
	statusNotSupported = -1
	statusInvalid      = -2
	statusNoMemory     = -3
	statusNoResource   = -4
	statusTimeout      = -5
	statusInternal     = -6
)

// statusOf classifies err.
func statusOf(err error) int {
	var (
		inv invalidErr
		res resourceErr
		ns  notSupportedErr
	)
	switch {
	case err == nil:
		return statusOK
	case errors.As(err, &ns):
		return statusNotSupported
	case errors.As(err, &inv):
		return statusInvalid
	case errors.As(err, &res):
		return statusNoResource
	case errors.Is(err, exec.ErrDeadline):
		return statusTimeout
	}
	return statusInternal
}

// lastError is the text of the latest error of this process, for
// goring_last_error (UCC calls from one progress thread at a time, and the
// text is for logs, so one slot is enough).
var lastError struct {
	sync.Mutex
	text string
}

func setLastError(err error) {
	lastError.Lock()
	lastError.text = "goring: " + err.Error()
	lastError.Unlock()
}

func getLastError() string {
	lastError.Lock()
	defer lastError.Unlock()
	return lastError.text
}

var errFinalized = errors.New("collective finalized while in flight")

// errPeerFailed is the cause of a collective ended by a peer that died.
var errPeerFailed = errors.New("peer failed")
