package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
)

// The CUmemorytype and CUresult values the classifier reads (the
// attributes it queries are shim.h's GC_ATTR_*).
const (
	memoryTypeDevice   = 2 // CU_MEMORYTYPE_DEVICE
	resultInvalidValue = 1 // CUDA_ERROR_INVALID_VALUE: not memory the driver knows
)

// PointerKind is what the driver says an address is.
type PointerKind int

const (
	// PointerHost is memory the driver does not manage as device memory:
	// ordinary host memory, or pinned host memory.
	PointerHost PointerKind = iota
	// PointerDevice is device memory (cuMemAlloc, cudaMalloc, an IPC
	// mapping) of GPU Ordinal.
	PointerDevice
	// PointerManaged is unified (managed) memory.
	PointerManaged
)

// PointerInfo asks the driver what p points into (cuPointerGetAttribute),
// for callers that receive a buffer whose memory type is not given: a UCC
// collective with UCC_MEMORY_TYPE_UNKNOWN. Nothing is guessed: an address
// the driver does not know is host memory by its own account.
func PointerInfo(p uintptr) (kind PointerKind, ordinal int, err error) {
	if err := Load(); err != nil {
		return PointerHost, 0, err
	}
	var mt C.uint
	var managed, ord, which C.int
	// One crossing into C for the three queries: this is on every CUDA
	// collective's path.
	if r := C.gc_pointer_info(C.gc_dptr(p), &mt, &managed, &ord, &which); r != 0 {
		if r == resultInvalidValue && which == 0 {
			return PointerHost, 0, nil // not memory the driver knows
		}
		what := [...]string{"memory type", "is managed", "device ordinal"}[which]
		return PointerHost, 0, check(fmt.Sprintf("cuPointerGetAttribute(%s of %#x)", what, p), r)
	}
	switch {
	case managed != 0:
		return PointerManaged, int(ord), nil
	case mt == memoryTypeDevice:
		return PointerDevice, int(ord), nil
	}
	return PointerHost, 0, nil
}
