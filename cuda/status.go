package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Result is a CUresult, the status code of every CUDA driver call. Every
// failure this package reports from the driver is a Result wrapped with
// the name of the call ("cuda: cuMemAlloc: ..."), so callers test it with
// errors.Is against the values below.
type Result int

// CUresult values used by the package and its callers; the numbers are
// the driver's stable ABI (cuda.h).
const (
	Success                  Result = 0
	ErrInvalidValue          Result = 1
	ErrOutOfMemory           Result = 2
	ErrNotInitialized        Result = 3
	ErrNoDevice              Result = 100
	ErrInvalidDevice         Result = 101
	ErrInvalidContext        Result = 201
	ErrAlreadyMapped         Result = 208
	ErrPeerAccessUnsupported Result = 217
	ErrInvalidHandle         Result = 400
	ErrNotReady              Result = 600
	ErrPeerAlreadyEnabled    Result = 704
	ErrPeerNotEnabled        Result = 705
)

// fallbackNames names the codes above before the driver is loaded (or
// when it does not know a code).
var fallbackNames = map[Result]string{
	Success:                  "CUDA_SUCCESS",
	ErrInvalidValue:          "CUDA_ERROR_INVALID_VALUE",
	ErrOutOfMemory:           "CUDA_ERROR_OUT_OF_MEMORY",
	ErrNotInitialized:        "CUDA_ERROR_NOT_INITIALIZED",
	ErrNoDevice:              "CUDA_ERROR_NO_DEVICE",
	ErrInvalidDevice:         "CUDA_ERROR_INVALID_DEVICE",
	ErrInvalidContext:        "CUDA_ERROR_INVALID_CONTEXT",
	ErrAlreadyMapped:         "CUDA_ERROR_ALREADY_MAPPED",
	ErrPeerAccessUnsupported: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	ErrInvalidHandle:         "CUDA_ERROR_INVALID_HANDLE",
	ErrNotReady:              "CUDA_ERROR_NOT_READY",
	ErrPeerAlreadyEnabled:    "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	ErrPeerNotEnabled:        "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
}

// Name is the C name of the code, from cuGetErrorName once the driver is
// loaded, e.g. "CUDA_ERROR_INVALID_VALUE".
func (r Result) Name() string {
	if loaded.Load() {
		if p := C.gc_error_name(C.gc_result(r)); p != nil {
			return C.GoString(p)
		}
	}
	if n, ok := fallbackNames[r]; ok {
		return n
	}
	return fmt.Sprintf("CUresult(%d)", int(r))
}

// Error is the code's name followed by the driver's text
// (cuGetErrorString), e.g. "CUDA_ERROR_INVALID_VALUE: invalid argument";
// before the driver is loaded the name stands alone.
func (r Result) Error() string {
	if loaded.Load() {
		if p := C.gc_error_string(C.gc_result(r)); p != nil {
			return r.Name() + ": " + C.GoString(p)
		}
	}
	return r.Name()
}

// check turns a driver status into an error naming the call: nil for
// CUDA_SUCCESS.
func check(call string, r C.gc_result) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("cuda: %s: %w", call, Result(r))
}

// Argument errors found on the Go side before any driver call.
var (
	// ErrZeroLength is returned for a zero-byte allocation.
	ErrZeroLength = errors.New("cuda: zero-length allocation")
	// ErrOutOfRange is wrapped by every offset/length that leaves a buffer.
	ErrOutOfRange = errors.New("cuda: range outside the buffer")
	// ErrFreed is returned for any use of a buffer, stream or event after
	// it was freed or destroyed.
	ErrFreed = errors.New("cuda: use after free")
	// ErrDeviceMismatch is returned when an object of one device is used
	// with another (a stream of GPU 1 for a copy issued on GPU 0's side).
	ErrDeviceMismatch = errors.New("cuda: objects of different devices")
)

// checkRange checks that [off, off+n) lies inside a buffer of size bytes.
func checkRange(what string, off, n, size int) error {
	if off < 0 || n < 0 || off > size || n > size-off {
		return fmt.Errorf("%w: %s [%d, %d+%d) of %d bytes", ErrOutOfRange, what, off, off, n, size)
	}
	return nil
}
