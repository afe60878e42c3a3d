package fakedev

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/goring-hpc/goring/exec"
)

// base is where the arena's addresses start: far above any address a
// Linux user-space heap hands out, so a fake address is never a host one.
const base uintptr = 0xfa4e_0000_0000_0000

// align keeps every allocation aligned for any dtype (and leaves a gap,
// so running off one allocation never lands in the next).
const align = 256

// Arena is the memory of any number of fake devices. Safe for concurrent
// use (ranks run on goroutines of their own).
type Arena struct {
	mu     sync.Mutex
	next   uintptr
	allocs []allocation // ascending addr
	seed   uint64
	nlocal uint64
	serial uint64
}

type allocation struct {
	mem    exec.Mem
	addr   uintptr
	b      []byte
	serial uint64 // tells allocations apart, as CUDA's buffer id does
}

// New makes an arena; seed fixes the order its executors complete work.
func New(seed uint64) *Arena { return &Arena{next: base, seed: seed} }

// Alloc returns n bytes (filled with 0xDD) on fake device dev.
func (a *Arena) Alloc(dev int, n int64) exec.Region {
	a.mu.Lock()
	defer a.mu.Unlock()
	mem := exec.Mem{Kind: exec.MemFake, Device: dev}
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xDD
	}
	a.serial++
	a.allocs = append(a.allocs, allocation{mem: mem, addr: a.next, b: b, serial: a.serial})
	a.next += (uintptr(n) + 2*align - 1) / align * align
	return exec.DeviceRegion(mem, a.allocs[len(a.allocs)-1].addr, n)
}

// bytes is the arena memory behind r, which must lie inside one
// allocation of r's device. Caller holds a.mu.
func (a *Arena) bytes(r exec.Region) ([]byte, error) {
	if r.Mem().Kind != exec.MemFake {
		return nil, fmt.Errorf("fakedev: %v is not fake device memory", r)
	}
	addr := r.Addr()
	i := a.find(addr)
	if i < 0 {
		return nil, fmt.Errorf("fakedev: %v is in no allocation", r)
	}
	al := &a.allocs[i]
	off := int64(addr - al.addr)
	if off+r.Len() > int64(len(al.b)) {
		return nil, fmt.Errorf("fakedev: %v runs off its %d-byte allocation", r, len(al.b))
	}
	if al.mem != r.Mem() {
		return nil, fmt.Errorf("fakedev: %v is memory of %v", r, al.mem)
	}
	return al.b[off : off+r.Len()], nil
}

// view is the bytes of r, host or fake. Caller holds a.mu.
func (a *Arena) view(r exec.Region) ([]byte, error) {
	if r.IsHost() {
		return r.Bytes(), nil
	}
	return a.bytes(r)
}

// Write copies b into the device region dst (len(b) == dst.Len()).
func (a *Arena) Write(dst exec.Region, b []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := a.bytes(dst)
	if err != nil {
		return err
	}
	if len(b) != len(d) {
		return fmt.Errorf("fakedev: write of %d bytes into %v", len(b), dst)
	}
	copy(d, b)
	return nil
}

// Read returns a host copy of the device region src.
func (a *Arena) Read(src exec.Region) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, err := a.bytes(src)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), s...), nil
}

// Copy moves src into dst (equal lengths), each host or fake memory: the
// in-memory transport's Memory.
func (a *Arena) Copy(dst, src exec.Region) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := a.view(dst)
	if err != nil {
		return err
	}
	s, err := a.view(src)
	if err != nil {
		return err
	}
	if len(d) != len(s) {
		return fmt.Errorf("fakedev: copy of %v into %v", src, dst)
	}
	copy(d, s)
	return nil
}

// NewLocal is Local as an exec.LocalExecutor (memtransport.Device).
func (a *Arena) NewLocal() exec.LocalExecutor { return a.Local() }

// Local returns a new executor for copies and reductions on the arena's
// devices (one per rank: it is used from one goroutine).
func (a *Arena) Local() *Local {
	a.mu.Lock()
	a.nlocal++
	n := a.nlocal
	a.mu.Unlock()
	return &Local{arena: a, rng: rand.New(rand.NewPCG(a.seed, n))}
}
