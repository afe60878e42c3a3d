package cuda

/*
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// pointerAttrBufferID is CU_POINTER_ATTRIBUTE_BUFFER_ID: a number the
// driver gives each allocation, never reused while the process lives.
const pointerAttrBufferID = 7

// Allocation is the device allocation that holds an address: what another
// process needs to map it (ExportAllocation, then OpenIPC of Size bytes)
// and to find the address in its mapping (the offset from Base).
type Allocation struct {
	Base DevicePtr
	Size int
	// ID tells allocations apart over time: memory freed and allocated
	// again at the same Base gets a new ID, so a cache of exports or
	// mappings keyed by ID never hands out a stale one.
	ID uint64
}

// AllocationOf asks the driver which allocation of d holds p
// (cuMemGetAddressRange and the buffer-id pointer attribute). p may point
// anywhere inside the allocation, e.g. into a buffer a UCC caller passed.
func (d *Device) AllocationOf(p DevicePtr) (Allocation, error) {
	ctx, err := d.context()
	if err != nil {
		return Allocation{}, err
	}
	var base C.gc_dptr
	var size C.size_t
	if err := check(fmt.Sprintf("cuMemGetAddressRange(%#x)", uintptr(p)), C.gc_mem_get_address_range(ctx, &base, &size, C.gc_dptr(p))); err != nil {
		return Allocation{}, err
	}
	var id C.ulonglong
	if err := check("cuPointerGetAttribute(buffer id)", C.gc_pointer_attribute(pointerAttrBufferID, unsafe.Pointer(&id), C.gc_dptr(p))); err != nil {
		return Allocation{}, err
	}
	return Allocation{Base: DevicePtr(base), Size: int(size), ID: uint64(id)}, nil
}

// ExportAllocation names allocation a for other processes
// (cuIpcGetMemHandle of its base). Memory from stream-ordered pools
// (cudaMallocAsync) or the virtual memory API cannot be exported this way:
// the driver's error says so, and callers fall back to another path.
func (d *Device) ExportAllocation(a Allocation) (IPCHandle, error) {
	var h IPCHandle
	ctx, err := d.context()
	if err != nil {
		return h, err
	}
	var ch C.gc_ipc_handle
	if err := check(fmt.Sprintf("cuIpcGetMemHandle(%#x)", uintptr(a.Base)), C.gc_ipc_get_mem_handle(ctx, &ch, C.gc_dptr(a.Base))); err != nil {
		return h, err
	}
	C.memcpy(unsafe.Pointer(&h[0]), unsafe.Pointer(&ch), C.size_t(len(h)))
	return h, nil
}
