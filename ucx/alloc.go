package ucx

import (
	"fmt"
	"syscall"
)

// Alloc returns n bytes of zeroed, page-aligned memory outside the Go heap
// (an anonymous private mmap). Such memory never moves and is never
// collected, so it suits large buffers that UCX reads or writes while an
// operation is in flight. Release it with Free. Alloc panics if the
// system refuses the mapping, as make does when memory runs out. Alloc(0)
// returns an empty slice that needs no Free.
func Alloc(n int) []byte {
	if n < 0 {
		panic(fmt.Sprintf("ucx: Alloc(%d): negative size", n))
	}
	if n == 0 {
		return []byte{}
	}
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
	if err := syscall.Munmap(b[:cap(b)]); err != nil {
		return fmt.Errorf("ucx: Free: %w", err)
	}
	return nil
}
