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

// The copy list: many independent copies of device memory in one kernel
// launch (kernels/copylist.cu), for executors that would otherwise issue
// one cuMemcpyAsync per copy (cudaexec's batches of copy steps).

// CopyDesc is one copy of a list: Bytes bytes from the device address Src
// to Dst (memory of the stream's device, or mapped into its context).
type CopyDesc struct {
	Dst, Src DevicePtr
	Bytes    int
}

const (
	// copyListPiece is the longest piece of one copy a CTA takes: a
	// longer copy is split into pieces on the host, so that it spreads
	// over many CTAs. A multiple of 16, so every piece keeps its copy's
	// alignment (the kernel's vector path).
	copyListPiece = 64 << 10
	// copyListBlock threads a CTA; copyListMaxBlocks CTAs at most (8 of
	// 256 threads fill an SM of 8.x/9.x: 1024 cover 128 SMs); a list of
	// fewer pieces gets one CTA a piece. Not tuned: a first choice.
	copyListBlock     = 256
	copyListMaxBlocks = 1024
)

// copyList is a stream's descriptor storage, reused across calls: the
// host array the descriptors are built in and the device array they are
// uploaded to. The upload and the kernel are queued on the stream, so the
// next call's upload runs after this call's kernel has read the list. The
// host array is pageable Go memory, which the driver has read when
// cuMemcpyHtoDAsync returns (so it is free for the next list at once);
// the driver may stage such a copy by waiting for the stream's earlier
// work. If a GPU run shows the host waiting there, pinned host arrays in
// turn, each reused once an event says its upload has run, avoid it.
type copyList struct {
	mu   sync.Mutex
	host []C.gc_copy_desc
	dev  *Buffer // room for cap(host) descriptors; nil until the first list
}

// copyListModules caches each device's loaded copy-list kernel.
var copyListModules sync.Map // *Device -> *copyListOnce

type copyListOnce struct {
	once sync.Once
	f    C.gc_function
	err  error
}

func (d *Device) copyListKernel() (C.gc_function, error) {
	v, _ := copyListModules.LoadOrStore(d, &copyListOnce{})
	o := v.(*copyListOnce)
	o.once.Do(func() {
		ctx, m, err := d.loadModule("copylist")
		if err != nil {
			o.err = err
			return
		}
		var f C.gc_function
		o.err = moduleFunction(ctx, m, &f, "goring_copy_list", m.image)
		o.f = f
	})
	return o.f, o.err
}

// CopyListAsync queues every copy of list on s as one kernel launch,
// after an upload of the list (cuMemcpyHtoDAsync into device memory that
// s keeps for its lists): two operations on s, whatever the list's
// length. The copies must be independent: no copy writes bytes another
// reads or writes (their order on the device is not defined). Copies of
// zero bytes are skipped; an empty list queues nothing. It returns at
// once; an event recorded on s after it completes when every copy has.
func CopyListAsync(s *Stream, list []CopyDesc) error {
	f, err := s.dev.copyListKernel()
	if err != nil {
		return err
	}
	cl := &s.list
	cl.mu.Lock()
	defer cl.mu.Unlock()
	h := cl.host[:0]
	for i, c := range list {
		if c.Bytes < 0 {
			return fmt.Errorf("cuda: copy list entry %d of %d bytes", i, c.Bytes)
		}
		for off := 0; off < c.Bytes; off += copyListPiece {
			n := min(copyListPiece, c.Bytes-off)
			h = append(h, C.gc_copy_desc{src: C.ulonglong(uintptr(c.Src) + uintptr(off)), dst: C.ulonglong(uintptr(c.Dst) + uintptr(off)), bytes: C.ulonglong(n)})
		}
	}
	cl.host = h
	if len(h) == 0 {
		return nil
	}
	if err := cl.reserve(s, cap(h)); err != nil {
		return err
	}
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	grid := min(len(h), copyListMaxBlocks)
	if r := C.gc_launch_copy_list(ctx, f, C.uint(grid), copyListBlock, cs, C.gc_dptr(cl.dev.Ptr()), &h[0], C.ulonglong(len(h))); r != 0 {
		return check("cuMemcpyHtoDAsync+cuLaunchKernel(goring_copy_list)", r)
	}
	return nil
}

// reserve makes the device array hold at least n descriptors. A larger
// one replaces it once the stream has finished with the old one (a
// kernel queued earlier may still read it).
func (cl *copyList) reserve(s *Stream, n int) error {
	size := n * int(unsafe.Sizeof(C.gc_copy_desc{}))
	if cl.dev != nil && cl.dev.Len() >= size {
		return nil
	}
	if err := cl.release(s); err != nil {
		return err
	}
	b, err := s.dev.Alloc(size)
	if err != nil {
		return err
	}
	cl.dev = b
	return nil
}

// release frees the device array after the stream has finished with it.
func (cl *copyList) release(s *Stream) error {
	if cl.dev == nil {
		return nil
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	err := cl.dev.Free()
	cl.dev = nil
	return err
}
