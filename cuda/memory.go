package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// DevicePtr is a device virtual address (CUdeviceptr). Go never
// dereferences it; it is passed back to the driver or to other libraries
// (UCX with a CUDA memory type, kernels).
type DevicePtr uintptr

// Buffer is device memory of a fixed length: allocated with Alloc
// (cuMemAlloc) or mapped from another process with OpenIPC. Every
// operation on it checks offsets and lengths against Len and fails with
// ErrFreed after Free. A Buffer may be used from several goroutines, but
// freeing it while a copy on it is queued on a stream is the caller's bug
// (as in CUDA): synchronize first.
type Buffer struct {
	dev   *Device
	ptr   DevicePtr
	bytes int
	ipc   bool // mapped by OpenIPC: Free closes the mapping
	pool  bool // from the stream-ordered pool (AllocPooled): Free returns it there

	mu    sync.Mutex
	freed bool
}

// Alloc allocates bytes of device memory on d (cuMemAlloc). The contents
// are undefined until written.
func (d *Device) Alloc(bytes int) (*Buffer, error) { return d.alloc(bytes, false) }

// AllocPooled allocates bytes from d's default stream-ordered memory pool
// (cuMemAllocAsync on the default stream, waited for), as frameworks that
// use cudaMallocAsync do. Such memory cannot be exported with a legacy IPC
// handle (ExportAllocation fails on it), so it is what the paths that fall
// back from CUDA IPC are tested with.
func (d *Device) AllocPooled(bytes int) (*Buffer, error) { return d.alloc(bytes, true) }

func (d *Device) alloc(bytes int, pool bool) (*Buffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("%w: %d bytes", ErrZeroLength, bytes)
	}
	ctx, err := d.context()
	if err != nil {
		return nil, err
	}
	var p C.gc_dptr
	name, r := "cuMemAlloc", C.gc_result(0)
	if pool {
		name, r = "cuMemAllocAsync", C.gc_mem_alloc_async(ctx, &p, C.size_t(bytes))
	} else {
		r = C.gc_mem_alloc(ctx, &p, C.size_t(bytes))
	}
	if err := check(fmt.Sprintf("%s(%d bytes on device %d)", name, bytes, d.ordinal), r); err != nil {
		return nil, err
	}
	return &Buffer{dev: d, ptr: DevicePtr(p), bytes: bytes, pool: pool}, nil
}

// Device is the GPU that owns the memory (for an IPC mapping: the device
// it was opened on).
func (b *Buffer) Device() *Device { return b.dev }

// Len is the buffer's length in bytes.
func (b *Buffer) Len() int { return b.bytes }

// Ptr is the device address of byte 0 (valid until Free).
func (b *Buffer) Ptr() DevicePtr { return b.ptr }

// live returns the context and address, or ErrFreed.
func (b *Buffer) live() (C.gc_ctx, C.gc_dptr, error) {
	b.mu.Lock()
	freed := b.freed
	b.mu.Unlock()
	if freed {
		return nil, 0, fmt.Errorf("%w: device buffer %#x", ErrFreed, uintptr(b.ptr))
	}
	ctx, err := b.dev.context()
	return ctx, C.gc_dptr(b.ptr), err
}

// Free releases the memory (cuMemFree, or cuIpcCloseMemHandle for a
// buffer from OpenIPC). A second Free returns ErrFreed.
func (b *Buffer) Free() error {
	b.mu.Lock()
	if b.freed {
		b.mu.Unlock()
		return fmt.Errorf("%w: device buffer %#x freed twice", ErrFreed, uintptr(b.ptr))
	}
	b.freed = true
	b.mu.Unlock()
	ctx, err := b.dev.context()
	if err != nil {
		return err
	}
	if b.ipc {
		return check("cuIpcCloseMemHandle", C.gc_ipc_close_mem_handle(ctx, C.gc_dptr(b.ptr)))
	}
	if b.pool {
		return check("cuMemFreeAsync", C.gc_mem_free_async(ctx, C.gc_dptr(b.ptr)))
	}
	return check("cuMemFree", C.gc_mem_free(ctx, C.gc_dptr(b.ptr)))
}

// Memset sets n bytes from off to v and waits for it (cuMemsetD8).
func (b *Buffer) Memset(off, n int, v byte) error {
	if err := checkRange("memset", off, n, b.bytes); err != nil {
		return err
	}
	ctx, p, err := b.live()
	if err != nil || n == 0 {
		return err
	}
	if err := check("cuMemsetD8", C.gc_memset_d8(ctx, p+C.gc_dptr(off), C.uchar(v), C.size_t(n))); err != nil {
		return err
	}
	// cuMemsetD8 may return before the memory is set (it is async with
	// respect to the host for device memory); make Memset synchronous.
	return check("cuCtxSynchronize", C.gc_ctx_synchronize(ctx))
}

// MemsetAsync queues the memset on s (cuMemsetD8Async).
func (b *Buffer) MemsetAsync(s *Stream, off, n int, v byte) error {
	if err := checkRange("memset", off, n, b.bytes); err != nil {
		return err
	}
	ctx, p, err := b.live()
	if err != nil || n == 0 {
		return err
	}
	cs, err := s.on(b.dev)
	if err != nil {
		return err
	}
	return check("cuMemsetD8Async", C.gc_memset_d8_async(ctx, p+C.gc_dptr(off), C.uchar(v), C.size_t(n), cs))
}

// HostBuffer is page-locked host memory (cuMemHostAlloc with
// CU_MEMHOSTALLOC_PORTABLE, so every context treats it as pinned). It is
// the only host memory the async copies accept: the driver reads it after
// the call returns, so it must not be Go heap memory.
type HostBuffer struct {
	dev   *Device
	ptr   unsafe.Pointer
	bytes int

	mu    sync.Mutex
	freed bool
}

const memHostAllocPortable = 0x01 // CU_MEMHOSTALLOC_PORTABLE

// AllocHost allocates bytes of pinned host memory through d's context.
func (d *Device) AllocHost(bytes int) (*HostBuffer, error) {
	return d.allocHost(bytes, memHostAllocPortable, "")
}

// allocHost is cuMemHostAlloc of bytes with flags (how names them in
// errors: "", or ", mapped").
func (d *Device) allocHost(bytes int, flags C.uint, how string) (*HostBuffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("%w: %d bytes", ErrZeroLength, bytes)
	}
	ctx, err := d.context()
	if err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	if err := check(fmt.Sprintf("cuMemHostAlloc(%d bytes%s)", bytes, how),
		C.gc_mem_host_alloc(ctx, &p, C.size_t(bytes), flags)); err != nil {
		return nil, err
	}
	return &HostBuffer{dev: d, ptr: p, bytes: bytes}, nil
}

// Len is the buffer's length in bytes.
func (h *HostBuffer) Len() int { return h.bytes }

// Bytes is the memory as a slice (valid until Free; never keep it longer).
func (h *HostBuffer) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		return nil
	}
	return unsafe.Slice((*byte)(h.ptr), h.bytes)
}

// addr returns the address of byte 0, or ErrFreed.
func (h *HostBuffer) addr() (uintptr, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		return 0, fmt.Errorf("%w: pinned host buffer %p", ErrFreed, h.ptr)
	}
	return uintptr(h.ptr), nil
}

// Free releases the memory (cuMemFreeHost).
func (h *HostBuffer) Free() error {
	h.mu.Lock()
	if h.freed {
		h.mu.Unlock()
		return fmt.Errorf("%w: pinned host buffer %p freed twice", ErrFreed, h.ptr)
	}
	h.freed = true
	h.mu.Unlock()
	ctx, err := h.dev.context()
	if err != nil {
		return err
	}
	return check("cuMemFreeHost", C.gc_mem_free_host(ctx, h.ptr))
}
