package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
)

// The copy list: many independent copies of device memory in one kernel
// launch (kernels/copylist.cu), for executors that would otherwise issue
// one cuMemcpyAsync per copy (cudaexec's batches of copy steps); and the
// reduce list, many independent reductions in one launch
// (kernels/reducelist.cu, its descriptors laid out as the copy list's),
// for cudaexec's batches of reduce steps. Both upload their descriptors
// on the stream into one device array the stream keeps (launchList).

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

// listModule is a device's loaded copy-list or reduce-list module: its
// functions, looked up once, in the order of the names asked for.
type listModule struct {
	once sync.Once
	fns  []C.gc_function
	err  error
}

// listFunctions loads the module of family into o (once per GPU:
// modules.go) and looks up names in it ("" names no function).
func (d *Device) listFunctions(pick func(*kernelHome) *listModule, family string, names func() []string) ([]C.gc_function, error) {
	h, err := d.home()
	if err != nil {
		return nil, err
	}
	o := pick(h)
	o.once.Do(func() {
		ctx, m, err := d.loadModule(family)
		if err != nil {
			o.err = err
			return
		}
		ns := names()
		o.fns = make([]C.gc_function, len(ns))
		for i, name := range ns {
			if name == "" {
				continue
			}
			if o.err = moduleFunction(ctx, m, &o.fns[i], name, m.image); o.err != nil {
				return
			}
		}
	})
	return o.fns, o.err
}

func (d *Device) copyListKernel() (C.gc_function, error) {
	fns, err := d.listFunctions(func(h *kernelHome) *listModule { return &h.copyList }, "copylist", func() []string { return []string{"goring_copy_list"} })
	if err != nil {
		return nil, err
	}
	return fns[0], nil
}

// reduceListIndex numbers (dtype, op) pairs for reduceListKernel.
func reduceListIndex(dt coll.Dtype, op coll.Op) int { return int(dt)*int(coll.Bxor+1) + int(op) }

// reduceListKernel is d's goring_reduce_list_<dt>_<op> (dt and op
// checked by the caller).
func (d *Device) reduceListKernel(dt coll.Dtype, op coll.Op) (C.gc_function, error) {
	fns, err := d.listFunctions(func(h *kernelHome) *listModule { return &h.reduceList }, "reducelist", func() []string {
		names := make([]string, reduceListIndex(coll.Float64, coll.Bxor)+1)
		for _, dt := range coll.Dtypes {
			for _, op := range coll.Ops {
				if coll.Supports(op, dt) {
					names[reduceListIndex(dt, op)] = "goring_reduce_list_" + dt.String() + "_" + op.String()
				}
			}
		}
		return names
	})
	if err != nil {
		return nil, err
	}
	return fns[reduceListIndex(dt, op)], nil
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
	return launchList(s, f, list, 1, "goring_copy_list")
}

// ReduceDesc is one reduction of a list: Dst = Dst OP Src element-wise
// over Bytes bytes (whole elements of the list's dtype, both addresses
// aligned to the element size).
type ReduceDesc = CopyDesc

// ReduceListAsync queues every reduction of list, each Dst = Dst op Src
// over elements of dtype dt, on s as one kernel launch
// (kernels/reducelist.cu) after an upload of the list, as CopyListAsync
// does: two operations on s, whatever the list's length. Each element's
// result has the bits of ReduceAddrAsync's (and of the host kernels).
// The reductions must be independent: none writes bytes another reads or
// writes (their order on the device is not defined), so reductions into
// one range go in separate lists, in the order they must run. Empty ones
// are skipped; an empty list queues nothing.
func ReduceListAsync(s *Stream, list []ReduceDesc, dt coll.Dtype, op coll.Op) error {
	size := dt.Size()
	if size == 0 || !coll.Supports(op, dt) {
		return fmt.Errorf("cuda: reduce list: %v is not defined on %v", op, dt)
	}
	f, err := s.dev.reduceListKernel(dt, op)
	if err != nil {
		return err
	}
	return launchList(s, f, list, size, "goring_reduce_list")
}

// launchList checks list (byte counts not negative, and, for align > 1,
// whole multiples of align at addresses aligned to it), splits it into
// pieces of at most copyListPiece bytes, uploads them into s's descriptor
// array and launches f over them (what names f in errors): one upload and
// one launch on s, or nothing for a list without bytes.
func launchList(s *Stream, f C.gc_function, list []CopyDesc, align int, what string) error {
	cl := &s.list
	cl.mu.Lock()
	defer cl.mu.Unlock()
	h := cl.host[:0]
	for i, c := range list {
		if c.Bytes < 0 || c.Bytes%align != 0 || uintptr(c.Src)%uintptr(align) != 0 || uintptr(c.Dst)%uintptr(align) != 0 {
			return fmt.Errorf("cuda: %s entry %d: %d bytes at %#x -> %#x, not whole aligned elements of %d bytes", what, i, c.Bytes, c.Src, c.Dst, align)
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
		return check("cuMemcpyHtoDAsync+cuLaunchKernel("+what+")", r)
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
