package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Synchronous copies return when the bytes are in place. Async copies are
// queued on a stream and complete in stream order; record an Event or
// synchronize the stream to know when. A zero-byte copy is checked like
// any other and then does nothing.

// CopyFromHost copies len(src) bytes from Go memory into b at off
// (cuMemcpyHtoD) and returns once they are in device memory. The driver's
// copy from pageable memory returns when the bytes are staged, before its
// DMA lands; work queued right after on a non-blocking stream (goring's
// streams are) could then read the old bytes, and did: a reduction test
// on H100 saw stale elements once in three runs. So the context is
// synchronized after the copy.
func (b *Buffer) CopyFromHost(off int, src []byte) error {
	if err := checkRange("copy to device", off, len(src), b.bytes); err != nil {
		return err
	}
	ctx, p, err := b.live()
	if err != nil || len(src) == 0 {
		return err
	}
	if err := check("cuMemcpyHtoD", C.gc_memcpy_htod(ctx, p+C.gc_dptr(off), unsafe.Pointer(&src[0]), C.size_t(len(src)))); err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.gc_ctx_synchronize(ctx))
}

// CopyToHost copies len(dst) bytes of b from off into Go memory (cuMemcpyDtoH).
func (b *Buffer) CopyToHost(dst []byte, off int) error {
	if err := checkRange("copy from device", off, len(dst), b.bytes); err != nil {
		return err
	}
	ctx, p, err := b.live()
	if err != nil || len(dst) == 0 {
		return err
	}
	return check("cuMemcpyDtoH", C.gc_memcpy_dtoh(ctx, unsafe.Pointer(&dst[0]), p+C.gc_dptr(off), C.size_t(len(dst))))
}

// Copy copies n bytes from src at srcOff to dst at dstOff and waits for
// them: cuMemcpyDtoD on one device, cuMemcpyPeer between two (direct over
// NVLink when peer access is enabled, staged by the driver otherwise).
func Copy(dst *Buffer, dstOff int, src *Buffer, srcOff, n int) error {
	dctx, dp, sctx, sp, err := deviceCopyOf(dst, dstOff, src, srcOff, n)
	if err != nil || n == 0 {
		return err
	}
	if dst.dev.dev == src.dev.dev {
		if err := check("cuMemcpyDtoD", C.gc_memcpy_dtod(dctx, dp, sp, C.size_t(n))); err != nil {
			return err
		}
		return check("cuCtxSynchronize", C.gc_ctx_synchronize(dctx))
	}
	if err := check("cuMemcpyPeer", C.gc_memcpy_peer(sctx, dp, dctx, sp, sctx, C.size_t(n))); err != nil {
		return err
	}
	// cuMemcpyPeer is asynchronous to the host: wait on both sides.
	if err := check("cuCtxSynchronize", C.gc_ctx_synchronize(sctx)); err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.gc_ctx_synchronize(dctx))
}

// CopyAsync queues a copy of n bytes from src at srcOff to dst at dstOff
// on s, which must belong to one of the two devices: cuMemcpyDtoDAsync on
// one device, cuMemcpyPeerAsync between two. For the full NVLink rate put
// the copy on a stream of the device that drives it and enable peer
// access first.
func CopyAsync(s *Stream, dst *Buffer, dstOff int, src *Buffer, srcOff, n int) error {
	dctx, dp, sctx, sp, err := deviceCopyOf(dst, dstOff, src, srcOff, n)
	if err != nil {
		return err
	}
	var cs C.gc_stream
	switch {
	case s.dev.dev == dst.dev.dev:
		cs, err = s.on(dst.dev)
	case s.dev.dev == src.dev.dev:
		cs, err = s.on(src.dev)
	default:
		err = fmt.Errorf("%w: stream of device %d for a copy %d -> %d", ErrDeviceMismatch, s.dev.ordinal, src.dev.ordinal, dst.dev.ordinal)
	}
	if err != nil || n == 0 {
		return err
	}
	sctxStream := s.dev.ctx
	if dst.dev.dev == src.dev.dev {
		return check("cuMemcpyDtoDAsync", C.gc_memcpy_dtod_async(dctx, dp, sp, C.size_t(n), cs))
	}
	return check("cuMemcpyPeerAsync", C.gc_memcpy_peer_async(sctxStream, dp, dctx, sp, sctx, C.size_t(n), cs))
}

// deviceCopyOf checks a device-to-device copy (both ranges, both buffers
// live) and returns both sides' contexts and addresses, offsets applied.
func deviceCopyOf(dst *Buffer, dstOff int, src *Buffer, srcOff, n int) (dctx C.gc_ctx, dp C.gc_dptr, sctx C.gc_ctx, sp C.gc_dptr, err error) {
	if err = checkRange("copy destination", dstOff, n, dst.bytes); err != nil {
		return
	}
	if err = checkRange("copy source", srcOff, n, src.bytes); err != nil {
		return
	}
	if dctx, dp, err = dst.live(); err != nil {
		return
	}
	if sctx, sp, err = src.live(); err != nil {
		return
	}
	return dctx, dp + C.gc_dptr(dstOff), sctx, sp + C.gc_dptr(srcOff), nil
}

// CopyHtoDAsync queues a copy of n bytes from pinned host memory to device
// memory on s (a stream of dst's device): cuMemcpyHtoDAsync.
func CopyHtoDAsync(s *Stream, dst *Buffer, dstOff int, src *HostBuffer, srcOff, n int) error {
	hc, err := hostCopyOf(s, dst, dstOff, "copy destination", src, srcOff, "copy source", n)
	if err != nil || n == 0 {
		return err
	}
	return check("cuMemcpyHtoDAsync", C.gc_memcpy_htod_async(hc.ctx, hc.dptr, hc.host, C.size_t(n), hc.stream))
}

// CopyDtoHAsync queues a copy of n bytes from device memory to pinned host
// memory on s (a stream of src's device): cuMemcpyDtoHAsync.
func CopyDtoHAsync(s *Stream, dst *HostBuffer, dstOff int, src *Buffer, srcOff, n int) error {
	hc, err := hostCopyOf(s, src, srcOff, "copy source", dst, dstOff, "copy destination", n)
	if err != nil || n == 0 {
		return err
	}
	return check("cuMemcpyDtoHAsync", C.gc_memcpy_dtoh_async(hc.ctx, hc.host, hc.dptr, C.size_t(n), hc.stream))
}

// hostCopy is what a copy between device and pinned host memory hands the
// driver: the device buffer's context and address, the host address and
// the stream, all offsets applied.
type hostCopy struct {
	ctx    C.gc_ctx
	dptr   C.gc_dptr
	host   C.uintptr_t
	stream C.gc_stream
}

// hostCopyOf checks both ranges, that both buffers are live and that s
// belongs to the device buffer's device (dWhat and hWhat name the two
// sides in errors).
func hostCopyOf(s *Stream, d *Buffer, dOff int, dWhat string, h *HostBuffer, hOff int, hWhat string, n int) (hostCopy, error) {
	if err := checkRange(dWhat, dOff, n, d.bytes); err != nil {
		return hostCopy{}, err
	}
	if err := checkRange(hWhat, hOff, n, h.bytes); err != nil {
		return hostCopy{}, err
	}
	ctx, dp, err := d.live()
	if err != nil {
		return hostCopy{}, err
	}
	addr, err := h.addr()
	if err != nil {
		return hostCopy{}, err
	}
	cs, err := s.on(d.dev)
	if err != nil {
		return hostCopy{}, err
	}
	return hostCopy{ctx: ctx, dptr: dp + C.gc_dptr(dOff), host: C.uintptr_t(addr + uintptr(hOff)), stream: cs}, nil
}
