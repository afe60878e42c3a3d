package cuda

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
)

// The reduction kernels (kernels/reduce.cu), built ahead of time by
// scripts/build_kernels.sh: cubins for compute capability 8.x and 9.x and
// PTX (ISA 9.0, compute_80) that the driver compiles for anything newer.
// kernels/MANIFEST ties them to the source (TestKernelManifest).
//
// The node collectives (kernels/node.cu, node.go), the copy list
// (kernels/copylist.cu, copylist.go) and the reduce list
// (kernels/reducelist.cu, copylist.go) are modules built the same way.
//
//go:embed kernels/reduce_sm80.cubin.gz kernels/reduce_sm90.cubin.gz kernels/reduce_compute80.ptx.gz
//go:embed kernels/node_sm80.cubin.gz kernels/node_sm90.cubin.gz kernels/node_compute80.ptx.gz
//go:embed kernels/copylist_sm80.cubin.gz kernels/copylist_sm90.cubin.gz kernels/copylist_compute80.ptx.gz
//go:embed kernels/reducelist_sm80.cubin.gz kernels/reducelist_sm90.cubin.gz kernels/reducelist_compute80.ptx.gz
var kernelImages embed.FS

// reduceBlock is the threads per block of a reduction: 512 threads, four
// blocks resident per SM on 8.x/9.x, which is full occupancy for a kernel
// of few registers. reduceBlocksPerSM blocks per SM make the grid; a
// grid-stride loop covers larger inputs. Memory-bound element-wise work
// needs enough loads in flight, not more threads than that.
const (
	reduceBlock       = 512
	reduceBlocksPerSM = 4
)

// reduceModule is a device's loaded kernels: one function per dtype and op,
// its multi form, and the multi copy.
type reduceModule struct {
	mod   C.gc_module
	fns   [coll.Float64 + 1][coll.Bxor + 1]C.gc_function
	multi [coll.Float64 + 1][coll.Bxor + 1]C.gc_function
	copyM C.gc_function
	image string // which embedded image was loaded
	grid  int    // blocks of a full-size launch
}

// kernelImage picks the image for compute capability major.minor: a cubin
// where one matches (a cubin runs on later minors of its major), else the
// PTX for the driver to compile.
func kernelImage(major, minor int) (string, error) {
	switch {
	case major < 8:
		return "", fmt.Errorf("cuda: compute capability %d.%d: goring's kernels need 8.0 or newer", major, minor)
	case major == 8:
		return "kernels/reduce_sm80.cubin.gz", nil
	case major == 9:
		return "kernels/reduce_sm90.cubin.gz", nil
	}
	return "kernels/reduce_compute80.ptx.gz", nil
}

// inflateImage inflates an embedded image, NUL-terminated, into the
// buffer alloc gives for its size (nil: no memory).
func inflateImage(name string, alloc func(n int) []byte) ([]byte, error) {
	gz, err := kernelImages.ReadFile(name)
	if err != nil {
		return nil, err
	}
	img, err := inflate(gz, alloc)
	if err != nil {
		return nil, fmt.Errorf("cuda: %s: %w", name, err)
	}
	return img, nil
}

// inflate is one gzip stream, NUL-terminated, in the buffer alloc gives.
// The trailer gives the inflated size, so the stream is inflated in
// place once: the node family's cubin is 19 MB, and growing a buffer to
// it had cost 68 MB of copies, then one more copy into C memory (a
// process's first GPU call inflates one image of each family;
// loadModule inflates straight into C memory).
func inflate(gz []byte, alloc func(n int) []byte) ([]byte, error) {
	if len(gz) < 18 { // a gzip header and trailer
		return nil, fmt.Errorf("%d bytes is no gzip stream", len(gz))
	}
	size := int(binary.LittleEndian.Uint32(gz[len(gz)-4:])) // ISIZE: the size mod 2^32
	z, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	img := alloc(size + 1)
	if img == nil {
		return nil, fmt.Errorf("no memory for its %d bytes", size+1)
	}
	if _, err := io.ReadFull(z, img[:size]); err != nil {
		return nil, err
	}
	// The stream must end there, its checksum good: a stream of 4 GiB or
	// more (ISIZE wraps), a longer one or a damaged one fails here.
	if n, err := z.Read(img[size:]); n != 0 || err != io.EOF {
		return nil, fmt.Errorf("more than its trailer's %d bytes, or a bad checksum (%v)", size, err)
	}
	img[size] = 0
	return img, nil
}

// loadModule loads the embedded image of a kernel family ("reduce",
// "node") for d's compute capability into d's context.
func (d *Device) loadModule(family string) (C.gc_ctx, *reduceModule, error) {
	major, minor, err := d.ComputeCapability()
	if err != nil {
		return nil, nil, err
	}
	name, err := kernelImage(major, minor)
	if err != nil {
		return nil, nil, err
	}
	name = strings.Replace(name, "kernels/reduce_", "kernels/"+family+"_", 1)
	var cimg unsafe.Pointer
	defer func() { C.free(cimg) }()
	if _, err := inflateImage(name, func(n int) []byte {
		if cimg = C.malloc(C.size_t(n)); cimg == nil {
			return nil
		}
		return unsafe.Slice((*byte)(cimg), n)
	}); err != nil {
		return nil, nil, err
	}
	ctx, err := d.context()
	if err != nil {
		return nil, nil, err
	}
	m := &reduceModule{image: name}
	var log [4096]C.char
	if r := C.gc_module_load(ctx, &m.mod, cimg, &log[0], C.size_t(len(log))); r != 0 {
		err := check(fmt.Sprintf("cuModuleLoadDataEx(%s on device %d, compute capability %d.%d)", name, d.ordinal, major, minor), r)
		if msg := C.GoString(&log[0]); msg != "" {
			err = fmt.Errorf("%w: JIT log: %s", err, msg)
		}
		return nil, nil, err
	}
	return ctx, m, nil
}

// LoadKernels loads every kernel family goring launches on d (the
// reductions, the node collectives, the copy and reduce lists) and looks
// their functions up, once per device; later calls return at once.
//
// Why ahead of the first launch: loading a module, or a function under
// CUDA's lazy loading, can wait for the device's queued work. A caller
// that posts a collective behind work held on its stream (UCC's generic
// triggered post holds the stream until the collective completes) would
// then wait for itself. So a team loads them when it first opens the
// GPU, before any call of it runs.
func (d *Device) LoadKernels() error {
	if err := d.LoadKernelsButNode(); err != nil {
		return err
	}
	_, err := d.nodeKernels()
	return err
}

// LoadKernelsButNode is LoadKernels without the node collectives, for a
// caller that never launches them (processes sharing one GPU, teams
// across hosts): their image is most of the embedded bytes (19 MB of the
// 9.x cubins), which a process would otherwise inflate and load at its
// first GPU call for nothing.
func (d *Device) LoadKernelsButNode() error {
	if _, err := d.reduceKernels(); err != nil {
		return err
	}
	if _, err := d.copyListKernel(); err != nil {
		return err
	}
	_, err := d.reduceListKernel(coll.Float32, coll.Sum)
	return err
}

func (d *Device) loadReduceKernels() (*reduceModule, error) {
	ctx, m, err := d.loadModule("reduce")
	if err != nil {
		return nil, err
	}
	name := m.image
	for _, dt := range coll.Dtypes {
		for _, op := range coll.Ops {
			if !coll.Supports(op, dt) {
				continue
			}
			for _, k := range []struct {
				prefix string
				fn     *C.gc_function
			}{{"goring_reduce_", &m.fns[dt][op]}, {"goring_reduce_multi_", &m.multi[dt][op]}} {
				if err := moduleFunction(ctx, m, k.fn, k.prefix+dt.String()+"_"+op.String(), name); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := moduleFunction(ctx, m, &m.copyM, "goring_copy_multi", name); err != nil {
		return nil, err
	}
	sms, err := d.SMCount()
	if err != nil {
		return nil, err
	}
	m.grid = sms * reduceBlocksPerSM
	return m, nil
}

// moduleFunction looks up fname in m (loaded from image), unloading m if
// it is missing.
func moduleFunction(ctx C.gc_ctx, m *reduceModule, fn *C.gc_function, fname, image string) error {
	cname := C.CString(fname)
	r := C.gc_module_function(ctx, fn, m.mod, cname)
	C.free(unsafe.Pointer(cname))
	if err := check(fmt.Sprintf("cuModuleGetFunction(%s in %s)", fname, image), r); err != nil {
		_ = C.gc_module_unload(ctx, m.mod)
		return err
	}
	return nil
}

// KernelImage names the embedded image d's kernels were loaded from
// (loading them if needed): a cubin or, on a GPU newer than the cubins,
// the PTX the driver compiled.
func (d *Device) KernelImage() (string, error) {
	m, err := d.reduceKernels()
	if err != nil {
		return "", err
	}
	return m.image, nil
}

// ReduceAsync queues dst[dstOff:+n] = dst OP src[srcOff:+n], element-wise
// over n bytes of dtype dt, on s (which must be the device of both
// buffers). Nothing waits: record an event after it to know when it ran.
func ReduceAsync(s *Stream, dst *Buffer, dstOff int, src *Buffer, srcOff, n int, dt coll.Dtype, op coll.Op) error {
	if err := checkRange("reduce destination", dstOff, n, dst.bytes); err != nil {
		return err
	}
	if err := checkRange("reduce source", srcOff, n, src.bytes); err != nil {
		return err
	}
	_, dp, err := dst.live()
	if err != nil {
		return err
	}
	_, sp, err := src.live()
	if err != nil {
		return err
	}
	if dst.dev.dev != s.dev.dev || src.dev.dev != s.dev.dev {
		return fmt.Errorf("%w: reduce on device %d's stream of buffers of devices %d and %d", ErrDeviceMismatch, s.dev.ordinal, dst.dev.ordinal, src.dev.ordinal)
	}
	return ReduceAddrAsync(s, DevicePtr(dp)+DevicePtr(dstOff), DevicePtr(sp)+DevicePtr(srcOff), n, dt, op)
}

// ReduceAddrAsync is ReduceAsync on device addresses of s's device (or
// of a peer it can access), for memory goring did not allocate: a UCC
// caller's buffers. The addresses must be aligned to the element size.
func ReduceAddrAsync(s *Stream, dst, src DevicePtr, n int, dt coll.Dtype, op coll.Op) error {
	size := dt.Size()
	if size == 0 || !coll.Supports(op, dt) {
		return fmt.Errorf("cuda: reduce: %v is not defined on %v", op, dt)
	}
	if n < 0 || n%size != 0 {
		return fmt.Errorf("cuda: reduce: %d bytes is not a whole number of %v elements", n, dt)
	}
	if uintptr(dst)%uintptr(size) != 0 || uintptr(src)%uintptr(size) != 0 {
		return fmt.Errorf("cuda: reduce: addresses %#x and %#x are not aligned to %d bytes", dst, src, size)
	}
	if n == 0 {
		return nil
	}
	m, err := s.dev.reduceKernels()
	if err != nil {
		return err
	}
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	elems := n / size
	grid := min(m.grid, (n/16+reduceBlock-1)/reduceBlock+1)
	return check("cuLaunchKernel(goring_reduce)", C.gc_launch_reduce(ctx, m.fns[dt][op], C.uint(grid), reduceBlock, cs,
		C.gc_dptr(dst), C.gc_dptr(src), C.ulonglong(elems)))
}

// CopyAddrAsync queues a copy of n bytes between device addresses
// (cuMemcpyDtoDAsync; with unified addressing either side may be a peer
// GPU's memory or an IPC mapping) on s.
func CopyAddrAsync(s *Stream, dst, src DevicePtr, n int) error {
	if n < 0 {
		return fmt.Errorf("cuda: copy of %d bytes", n)
	}
	if n == 0 {
		return nil
	}
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	return check("cuMemcpyDtoDAsync", C.gc_memcpy_dtod_async(ctx, C.gc_dptr(dst), C.gc_dptr(src), C.size_t(n), cs))
}

// MultiMax is the most sources and destinations one multi kernel takes
// (GC_MULTI_MAX, GORING_MULTI_MAX in the kernels).
const MultiMax = C.GC_MULTI_MAX

// ReduceMultiAddrAsync queues, for every element of n bytes of dtype dt,
// acc = ((srcs[0] op srcs[1]) op ...) in source order and acc written to
// every address of dsts, in one kernel on s: each source read once. A
// destination may also be a source (in place). Addresses are of s's
// device (or peers it can access), aligned to the element size.
func ReduceMultiAddrAsync(s *Stream, dsts, srcs []DevicePtr, n int, dt coll.Dtype, op coll.Op) error {
	size := dt.Size()
	if size == 0 || !coll.Supports(op, dt) {
		return fmt.Errorf("cuda: reduce: %v is not defined on %v", op, dt)
	}
	if n < 0 || n%size != 0 {
		return fmt.Errorf("cuda: reduce: %d bytes is not a whole number of %v elements", n, dt)
	}
	a, err := multiArgs(dsts, srcs, size)
	if err != nil || n == 0 {
		return err
	}
	a.n = C.ulonglong(n / size)
	m, err := s.dev.reduceKernels()
	if err != nil {
		return err
	}
	return launchMulti(s, m, m.multi[dt][op], &a, n, "goring_reduce_multi")
}

// CopyMultiAddrAsync queues n bytes of src copied to every address of
// dsts, in one kernel on s: the source read once.
func CopyMultiAddrAsync(s *Stream, dsts []DevicePtr, src DevicePtr, n int) error {
	if n < 0 {
		return fmt.Errorf("cuda: copy of %d bytes", n)
	}
	a, err := multiArgs(dsts, []DevicePtr{src}, 1)
	if err != nil || n == 0 {
		return err
	}
	a.n = C.ulonglong(n)
	m, err := s.dev.reduceKernels()
	if err != nil {
		return err
	}
	return launchMulti(s, m, m.copyM, &a, n, "goring_copy_multi")
}

// multiArgs checks the operand counts and alignment and fills the
// kernel's argument.
func multiArgs(dsts, srcs []DevicePtr, align int) (C.gc_multi_args, error) {
	var a C.gc_multi_args
	if len(srcs) < 1 || len(srcs) > MultiMax || len(dsts) < 1 || len(dsts) > MultiMax {
		return a, fmt.Errorf("cuda: a multi kernel takes 1 to %d sources and destinations, not %d and %d", MultiMax, len(srcs), len(dsts))
	}
	for i, p := range srcs {
		if uintptr(p)%uintptr(align) != 0 {
			return a, fmt.Errorf("cuda: source %#x is not aligned to %d bytes", p, align)
		}
		a.src[i] = C.ulonglong(p)
	}
	for i, p := range dsts {
		if uintptr(p)%uintptr(align) != 0 {
			return a, fmt.Errorf("cuda: destination %#x is not aligned to %d bytes", p, align)
		}
		a.dst[i] = C.ulonglong(p)
	}
	a.nsrc, a.ndst = C.uint(len(srcs)), C.uint(len(dsts))
	return a, nil
}

func launchMulti(s *Stream, m *reduceModule, f C.gc_function, a *C.gc_multi_args, n int, what string) error {
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	grid := min(m.grid, (n/16+reduceBlock-1)/reduceBlock+1)
	return check("cuLaunchKernel("+what+")", C.gc_launch_multi(ctx, f, C.uint(grid), reduceBlock, cs, a))
}
