package cuda

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// CopyDtoHAddrAsync queues a copy of n bytes from the device address src
// (a buffer of s's device, a peer's, or an IPC mapping) into pinned host
// memory dst at dstOff, on s (cuMemcpyDtoHAsync).
func CopyDtoHAddrAsync(s *Stream, dst *HostBuffer, dstOff int, src DevicePtr, n int) error {
	if err := checkRange("copy destination", dstOff, n, dst.bytes); err != nil || n == 0 {
		return err
	}
	addr, err := dst.addr()
	if err != nil {
		return err
	}
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	return check("cuMemcpyDtoHAsync", C.gc_memcpy_dtoh_async(ctx, C.uintptr_t(addr+uintptr(dstOff)), C.gc_dptr(src), C.size_t(n), cs))
}

// CopyHtoDAddrAsync queues a copy of n bytes from pinned host memory src at
// srcOff to the device address dst, on s (cuMemcpyHtoDAsync).
func CopyHtoDAddrAsync(s *Stream, dst DevicePtr, src *HostBuffer, srcOff, n int) error {
	if err := checkRange("copy source", srcOff, n, src.bytes); err != nil || n == 0 {
		return err
	}
	addr, err := src.addr()
	if err != nil {
		return err
	}
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	return check("cuMemcpyHtoDAsync", C.gc_memcpy_htod_async(ctx, C.gc_dptr(dst), C.uintptr_t(addr+uintptr(srcOff)), C.size_t(n), cs))
}

// CopyToHostOn copies len(dst) bytes at the device address src into host
// memory of any kind (Go's too), ordered on s: it returns once the bytes
// are in dst, and waits only for s's earlier work, never for other
// streams' (cuMemcpyDtoHAsync on pageable memory). CopyToHostAddr's
// synchronous copy would wait for the legacy stream, and so for every
// blocking stream of the context.
func CopyToHostOn(s *Stream, dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	if err := check("cuMemcpyDtoHAsync", C.gc_memcpy_dtoh_pageable(ctx, unsafe.Pointer(&dst[0]), C.gc_dptr(src), C.size_t(len(dst)), cs)); err != nil {
		return err
	}
	// Pinned memory is copied asynchronously: the bytes are there once
	// s has run the copy.
	return s.Synchronize()
}

// CopyFromHostOn copies src, host memory of any kind, to the device
// address dst, ordered on s, and returns once the bytes are in device
// memory; it waits only for s's work (see CopyToHostOn).
func CopyFromHostOn(s *Stream, dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	if err := check("cuMemcpyHtoDAsync", C.gc_memcpy_htod_pageable(ctx, C.gc_dptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)), cs)); err != nil {
		return err
	}
	return s.Synchronize()
}

// CopyToHostAddr copies len(dst) bytes at the device address src (memory
// of d, or mapped into d's context) into host memory and waits for them
// (cuMemcpyDtoH).
func (d *Device) CopyToHostAddr(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	ctx, err := d.context()
	if err != nil {
		return err
	}
	return check("cuMemcpyDtoH", C.gc_memcpy_dtoh(ctx, unsafe.Pointer(&dst[0]), C.gc_dptr(src), C.size_t(len(dst))))
}
