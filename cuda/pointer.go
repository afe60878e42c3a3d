package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// CUpointer_attribute values and CUmemorytype values the classifier reads.
const (
	pointerAttrMemoryType    = 2 // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
	pointerAttrIsManaged     = 8 // CU_POINTER_ATTRIBUTE_IS_MANAGED
	pointerAttrDeviceOrdinal = 9 // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
	memoryTypeDevice         = 2 // CU_MEMORYTYPE_DEVICE
	resultInvalidValue       = 1 // CUDA_ERROR_INVALID_VALUE: not memory the driver knows
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
	r := C.gc_pointer_attribute(pointerAttrMemoryType, unsafe.Pointer(&mt), C.gc_dptr(p))
	if r == resultInvalidValue {
		return PointerHost, 0, nil
	}
	if err := check(fmt.Sprintf("cuPointerGetAttribute(memory type of %#x)", p), r); err != nil {
		return PointerHost, 0, err
	}
	var managed C.int
	if err := check("cuPointerGetAttribute(is managed)", C.gc_pointer_attribute(pointerAttrIsManaged, unsafe.Pointer(&managed), C.gc_dptr(p))); err != nil {
		return PointerHost, 0, err
	}
	var ord C.int
	if err := check("cuPointerGetAttribute(device ordinal)", C.gc_pointer_attribute(pointerAttrDeviceOrdinal, unsafe.Pointer(&ord), C.gc_dptr(p))); err != nil {
		return PointerHost, 0, err
	}
	switch {
	case managed != 0:
		return PointerManaged, int(ord), nil
	case mt == memoryTypeDevice:
		return PointerDevice, int(ord), nil
	}
	return PointerHost, 0, nil
}
