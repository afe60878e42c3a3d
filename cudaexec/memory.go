package cudaexec

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
)

// GPU is one rank's view of one CUDA device: its memory and its executor.
type GPU struct {
	dev *cuda.Device
	mem exec.Mem
	// PollEvery is the Every of the executors Local makes (0:
	// exec.PollEvery): goring bench --device-poll.
	PollEvery time.Duration

	mu     sync.Mutex
	allocs []*cuda.Buffer // ascending address: every buffer g holds
	idle   []*cuda.Buffer // freed by the caller, kept for reuse
}

// Open retains GPU ordinal's primary context. Without a driver the error
// is cuda's *NoDriverError (cuda.IsNoDriver).
func Open(ordinal int) (*GPU, error) {
	d, err := cuda.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &GPU{dev: d, mem: exec.CUDA(ordinal)}, nil
}

// Device is the cuda.Device behind g.
func (g *GPU) Device() *cuda.Device { return g.dev }

// Mem is the memory type of g's regions.
func (g *GPU) Mem() exec.Mem { return g.mem }

// Close frees what g allocated and releases the context.
func (g *GPU) Close() error {
	g.mu.Lock()
	var errs []error
	for _, b := range g.allocs {
		errs = append(errs, b.Free())
	}
	g.allocs, g.idle = nil, nil
	g.mu.Unlock()
	errs = append(errs, g.dev.Close())
	return errors.Join(errs...)
}

// Alloc returns n bytes of device memory (n may be 0: an empty region).
// A request larger than the free memory fails with the sizes named.
//
// Freed buffers are kept and handed out again (the smallest that fits),
// never returned to the driver before Close. That is not only for speed:
// UCX caches what it learnt of a device buffer (its IPC handle, for a peer
// to map) by address, and hears of frees only by hooking the CUDA
// allocator, which goring's dlopen'd driver calls bypass. A buffer freed
// and reallocated at the same address would leave a stale handle in that
// cache and a peer writing into the dead allocation (seen: collectives
// with --alg all on one H100 lost bytes at the second algorithm).
func (g *GPU) Alloc(n int64) (exec.Region, error) {
	if n == 0 {
		return exec.DeviceRegion(g.mem, 0, 0), nil
	}
	g.mu.Lock()
	best := -1
	for i, b := range g.idle {
		if int64(b.Len()) >= n && (best < 0 || b.Len() < g.idle[best].Len()) {
			best = i
		}
	}
	if best >= 0 {
		b := g.idle[best]
		g.idle = append(g.idle[:best], g.idle[best+1:]...)
		g.mu.Unlock()
		return exec.DeviceRegion(g.mem, uintptr(b.Ptr()), n), nil
	}
	g.mu.Unlock()
	b, err := g.dev.Alloc(int(n))
	if err != nil {
		if free, ferr := g.dev.FreeMemoryBytes(); ferr == nil {
			return exec.Region{}, fmt.Errorf("cudaexec: %d bytes on %v (%d free): %w", n, g.mem, free, err)
		}
		return exec.Region{}, err
	}
	g.mu.Lock()
	i := sort.Search(len(g.allocs), func(i int) bool { return g.allocs[i].Ptr() > b.Ptr() })
	g.allocs = append(g.allocs, nil)
	copy(g.allocs[i+1:], g.allocs[i:])
	g.allocs[i] = b
	g.mu.Unlock()
	return exec.DeviceRegion(g.mem, uintptr(b.Ptr()), n), nil
}

// Free gives back a region Alloc returned (synchronize work on it first);
// the memory stays with g for later Allocs until Close (see Alloc).
func (g *GPU) Free(r exec.Region) error {
	if r.Len() == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, b := range g.idle {
		if uintptr(b.Ptr()) == r.Addr() {
			return fmt.Errorf("cudaexec: %v freed twice", r)
		}
	}
	for _, b := range g.allocs {
		if uintptr(b.Ptr()) == r.Addr() {
			g.idle = append(g.idle, b)
			return nil
		}
	}
	return fmt.Errorf("cudaexec: free of %v, which this GPU did not allocate", r)
}

// HeldBytes is the device memory g holds (in use and kept for reuse).
func (g *GPU) HeldBytes() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	var n int64
	for _, b := range g.allocs {
		n += int64(b.Len())
	}
	return n
}

// find is the allocation holding r and r's offset in it.
func (g *GPU) find(r exec.Region) (*cuda.Buffer, int, error) {
	if r.Mem() != g.mem {
		return nil, 0, fmt.Errorf("cudaexec: %v is not memory of %v", r, g.mem)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	addr := r.Addr()
	i := sort.Search(len(g.allocs), func(i int) bool { return uintptr(g.allocs[i].Ptr()) > addr }) - 1
	if i < 0 {
		return nil, 0, fmt.Errorf("cudaexec: %v is in no buffer of this GPU", r)
	}
	b := g.allocs[i]
	off := int(addr - uintptr(b.Ptr()))
	if int64(off)+r.Len() > int64(b.Len()) {
		return nil, 0, fmt.Errorf("cudaexec: %v runs off its %d-byte buffer", r, b.Len())
	}
	return b, off, nil
}

// Write copies b to the start of dst, synchronously.
func (g *GPU) Write(dst exec.Region, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	buf, off, err := g.find(dst.Slice(0, int64(len(b))))
	if err != nil {
		return err
	}
	return buf.CopyFromHost(off, b)
}

// Read fills dst from the start of src, synchronously.
func (g *GPU) Read(dst []byte, src exec.Region) error {
	if len(dst) == 0 {
		return nil
	}
	buf, off, err := g.find(src.Slice(0, int64(len(dst))))
	if err != nil {
		return err
	}
	return buf.CopyToHost(dst, off)
}

// NewLocal is Local as an exec.LocalExecutor, for bench.Memory.
func (g *GPU) NewLocal() (exec.LocalExecutor, error) {
	l, err := g.Local()
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Copy moves src into dst (equal lengths), synchronously, each side host
// memory or this GPU's: what an in-process transport needs to move device
// buffers (the tests run whole collectives on one GPU this way).
func (g *GPU) Copy(dst, src exec.Region) error {
	if dst.Len() != src.Len() {
		return fmt.Errorf("cudaexec: copy of %v into %v", src, dst)
	}
	if dst.Len() == 0 {
		return nil
	}
	switch {
	case dst.IsHost() && src.IsHost():
		copy(dst.Bytes(), src.Bytes())
		return nil
	case dst.IsHost():
		return g.Read(dst.Bytes(), src)
	case src.IsHost():
		return g.Write(dst, src.Bytes())
	}
	d, doff, err := g.find(dst)
	if err != nil {
		return err
	}
	s, soff, err := g.find(src)
	if err != nil {
		return err
	}
	return cuda.Copy(d, doff, s, soff, int(dst.Len()))
}
