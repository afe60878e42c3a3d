package ucx

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Status is a UCX status code (ucs_status_t). Every failure this package
// reports from UCX is a Status, possibly wrapped, so callers test it with
// errors.Is against the sentinels below or with IsPeerFailure.
type Status int

// UCX status codes; the values are UCX's stable ABI (ucs/type/status.h).
const (
	OK                      Status = 0
	ErrInProgress           Status = 1 // not an error in UCX: the operation is still running
	ErrNoMessage            Status = -1
	ErrNoResource           Status = -2
	ErrIOError              Status = -3
	ErrNoMemory             Status = -4
	ErrInvalidParam         Status = -5
	ErrUnreachable          Status = -6
	ErrInvalidAddr          Status = -7
	ErrNotImplemented       Status = -8
	ErrMessageTruncated     Status = -9
	ErrNoProgress           Status = -10
	ErrBufferTooSmall       Status = -11
	ErrNoElem               Status = -12
	ErrSomeConnectsFailed   Status = -13
	ErrNoDevice             Status = -14
	ErrBusy                 Status = -15
	ErrCanceled             Status = -16
	ErrShmemSegment         Status = -17
	ErrAlreadyExists        Status = -18
	ErrOutOfRange           Status = -19
	ErrTimedOut             Status = -20
	ErrExceedsLimit         Status = -21
	ErrUnsupported          Status = -22
	ErrRejected             Status = -23
	ErrNotConnected         Status = -24
	ErrConnectionReset      Status = -25
	ErrFirstLinkFailure     Status = -40
	ErrLastLinkFailure      Status = -59
	ErrFirstEndpointFailure Status = -60
	ErrEndpointTimeout      Status = -80
	ErrLastEndpointFailure  Status = -89
)

var statusNames = map[Status]string{
	OK:                    "UCS_OK",
	ErrInProgress:         "UCS_INPROGRESS",
	ErrNoMessage:          "UCS_ERR_NO_MESSAGE",
	ErrNoResource:         "UCS_ERR_NO_RESOURCE",
	ErrIOError:            "UCS_ERR_IO_ERROR",
	ErrNoMemory:           "UCS_ERR_NO_MEMORY",
	ErrInvalidParam:       "UCS_ERR_INVALID_PARAM",
	ErrUnreachable:        "UCS_ERR_UNREACHABLE",
	ErrInvalidAddr:        "UCS_ERR_INVALID_ADDR",
	ErrNotImplemented:     "UCS_ERR_NOT_IMPLEMENTED",
	ErrMessageTruncated:   "UCS_ERR_MESSAGE_TRUNCATED",
	ErrNoProgress:         "UCS_ERR_NO_PROGRESS",
	ErrBufferTooSmall:     "UCS_ERR_BUFFER_TOO_SMALL",
	ErrNoElem:             "UCS_ERR_NO_ELEM",
	ErrSomeConnectsFailed: "UCS_ERR_SOME_CONNECTS_FAILED",
	ErrNoDevice:           "UCS_ERR_NO_DEVICE",
	ErrBusy:               "UCS_ERR_BUSY",
	ErrCanceled:           "UCS_ERR_CANCELED",
	ErrShmemSegment:       "UCS_ERR_SHMEM_SEGMENT",
	ErrAlreadyExists:      "UCS_ERR_ALREADY_EXISTS",
	ErrOutOfRange:         "UCS_ERR_OUT_OF_RANGE",
	ErrTimedOut:           "UCS_ERR_TIMED_OUT",
	ErrExceedsLimit:       "UCS_ERR_EXCEEDS_LIMIT",
	ErrUnsupported:        "UCS_ERR_UNSUPPORTED",
	ErrRejected:           "UCS_ERR_REJECTED",
	ErrNotConnected:       "UCS_ERR_NOT_CONNECTED",
	ErrConnectionReset:    "UCS_ERR_CONNECTION_RESET",
	ErrEndpointTimeout:    "UCS_ERR_ENDPOINT_TIMEOUT",
}

// Name is the C name of the code, e.g. "UCS_ERR_CANCELED"; codes inside
// UCX's link and endpoint failure ranges get the range and offset.
func (s Status) Name() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	switch {
	case s <= ErrFirstLinkFailure && s >= ErrLastLinkFailure:
		return fmt.Sprintf("UCS_ERR_FIRST_LINK_FAILURE-%d", int(ErrFirstLinkFailure-s))
	case s <= ErrFirstEndpointFailure && s >= ErrLastEndpointFailure:
		return fmt.Sprintf("UCS_ERR_FIRST_ENDPOINT_FAILURE-%d", int(ErrFirstEndpointFailure-s))
	}
	return fmt.Sprintf("ucs_status_t(%d)", int(s))
}

// Error is UCX's own text (ucs_status_string) followed by the code's name,
// e.g. "Message truncated (UCS_ERR_MESSAGE_TRUNCATED)". Before libucp is
// loaded the name stands alone.
func (s Status) Error() string {
	if loaded.Load() {
		if p := C.gr_status_string(C.int(s)); p != nil {
			return C.GoString(p) + " (" + s.Name() + ")"
		}
	}
	return s.Name()
}

// statusErr turns a C status into an error: nil for UCS_OK.
func statusErr(st C.int) error {
	if st == 0 {
		return nil
	}
	return Status(st)
}

// IsPeerFailure reports whether err says that the remote side is gone or
// cannot be reached: the statuses UCX gives requests and endpoints when a
// peer process dies or its link fails.
func IsPeerFailure(err error) bool {
	var s Status
	if !errors.As(err, &s) {
		return false
	}
	switch s {
	case ErrUnreachable, ErrConnectionReset, ErrNotConnected, ErrEndpointTimeout, ErrIOError, ErrRejected:
		return true
	}
	return (s <= ErrFirstLinkFailure && s >= ErrLastLinkFailure) ||
		(s <= ErrFirstEndpointFailure && s >= ErrLastEndpointFailure)
}
