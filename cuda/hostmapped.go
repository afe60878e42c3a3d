package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// memHostAllocDeviceMap is CU_MEMHOSTALLOC_DEVICEMAP: the pinned memory
// is also mapped into the device address space.
const memHostAllocDeviceMap = 0x02

// AllocMappedHost allocates pinned host memory that every context can
// use (portable) and that kernels can load and store through a device
// address (MappedAddr): words a kernel polls while the host writes them,
// as the node collectives' abort word.
func (d *Device) AllocMappedHost(bytes int) (*HostBuffer, error) {
	h, err := d.allocHost(bytes, memHostAllocPortable|memHostAllocDeviceMap, ", mapped")
	if err != nil {
		return nil, err
	}
	clear(unsafe.Slice((*byte)(h.ptr), bytes))
	return h, nil
}

// MappedAddr is the device address of byte off of h (from
// AllocMappedHost) for kernels of dev (cuMemHostGetDevicePointer).
func (h *HostBuffer) MappedAddr(dev *Device, off int) (DevicePtr, error) {
	// One byte, not zero: off must name a byte of h, and h.bytes (one
	// past the end) passes a check of an empty range.
	if err := checkRange("mapped host address", off, 1, h.bytes); err != nil {
		return 0, err
	}
	p, err := h.livePtr()
	if err != nil {
		return 0, err
	}
	ctx, err := dev.context()
	if err != nil {
		return 0, err
	}
	var d C.gc_dptr
	if err := check("cuMemHostGetDevicePointer", C.gc_mem_host_get_device_pointer(ctx, &d, p)); err != nil {
		return 0, err
	}
	return DevicePtr(d) + DevicePtr(off), nil
}

// Word is the 8-byte word at byte off of h (8-byte aligned), for the host
// side of a word kernels poll or set: atomic loads and stores.
func (h *HostBuffer) Word(off int) (*atomic.Uint64, error) {
	w, err := h.Words(off, 1)
	if err != nil {
		return nil, err
	}
	return &w[0], nil
}

// Words is n 8-byte words of h from byte off (8-byte aligned), for the
// host side of words kernels set: atomic loads and stores.
func (h *HostBuffer) Words(off, n int) ([]atomic.Uint64, error) {
	if off%8 != 0 {
		return nil, fmt.Errorf("cuda: host words at %d are not 8-byte aligned", off)
	}
	if err := checkRange("host words", off, 8*n, h.bytes); err != nil {
		return nil, err
	}
	p, err := h.livePtr()
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*atomic.Uint64)(unsafe.Add(p, off)), n), nil
}

// livePtr is h's memory, or ErrFreed.
func (h *HostBuffer) livePtr() (unsafe.Pointer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		return nil, fmt.Errorf("%w: pinned host buffer %p", ErrFreed, h.ptr)
	}
	return h.ptr, nil
}
