package ucx

import (
	"fmt"
	"math/bits"
	"sync"
	"syscall"
)

// Alloc returns n bytes of zeroed, page-aligned memory outside the Go heap
// (an anonymous private mmap). Such memory never moves and is never
// collected, so it suits large buffers that UCX reads or writes while an
// operation is in flight. Release it with Free. Alloc panics if the
// system refuses the mapping, as make does when memory runs out. Alloc(0)
// returns an empty slice that needs no Free.
//
// Regions up to maxPooled bytes are kept when freed and handed out again
// (zeroed): a mapping and its release cost system calls, a page fault and,
// in a process with several threads, a TLB shootdown on every core that
// runs one, more than a small collective that needs the region.
func Alloc(n int) []byte {
	if n < 0 {
		panic(fmt.Sprintf("ucx: Alloc(%d): negative size", n))
	}
	if n == 0 {
		return []byte{}
	}
	if n <= maxPooled {
		c := sizeClass(n)
		if b := pool.take(c); b != nil {
			clear(b)
			return b[:n]
		}
		return mapAnon(classBytes(c))[:n]
	}
	return mapAnon(n)
}

func mapAnon(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic(fmt.Sprintf("ucx: Alloc(%d): mmap: %v", n, err))
	}
	return b
}

// Free releases memory from Alloc. b must be the whole slice Alloc
// returned (any length, the same first byte and capacity), and no
// operation may still use it.
func Free(b []byte) error {
	if cap(b) == 0 {
		return nil
	}
	b = b[:cap(b)]
	if len(b) <= maxPooled && len(b) == classBytes(sizeClass(len(b))) && pool.put(b) {
		return nil
	}
	if err := syscall.Munmap(b); err != nil {
		return fmt.Errorf("ucx: Free: %w", err)
	}
	return nil
}

// The pool: regions of a page to maxPooled bytes, in power-of-two
// classes, at most maxPerClass kept in each.
const (
	minPooled   = 4 << 10
	maxPooled   = 64 << 10
	numClasses  = 5 // 4, 8, 16, 32, 64 KiB
	maxPerClass = 16
)

var pool regionPool

type regionPool struct {
	mu   sync.Mutex
	free [numClasses][][]byte
}

// sizeClass is the class of the smallest region of at least n bytes.
func sizeClass(n int) int {
	if n <= minPooled {
		return 0
	}
	return bits.Len(uint(n-1)) - bits.Len(uint(minPooled-1))
}

func classBytes(c int) int { return minPooled << c }

func (p *regionPool) take(c int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.free[c]
	if len(f) == 0 {
		return nil
	}
	b := f[len(f)-1]
	p.free[c] = f[:len(f)-1]
	return b
}

func (p *regionPool) put(b []byte) bool {
	c := sizeClass(len(b))
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free[c]) >= maxPerClass {
		return false
	}
	p.free[c] = append(p.free[c], b)
	return true
}
