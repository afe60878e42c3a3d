package bench

import (
	"github.com/goring-hpc/goring/exec"
)

// Memory provides a rank's buffers in one memory type and moves bytes
// between them and the host, so that patterns are written and checked the
// same way on every memory (package cudaexec's GPU memory, package
// exec/fakedev's fake device, or host memory through Config.Alloc).
type Memory interface {
	// Alloc returns n bytes (n may be 0).
	Alloc(n int64) (exec.Region, error)
	Free(r exec.Region) error
	// Write copies b (len(b) <= dst.Len()) to the start of dst; Read
	// fills dst from the start of src. Both complete before returning.
	Write(dst exec.Region, b []byte) error
	Read(dst []byte, src exec.Region) error
	// NewLocal is an executor for copies and reductions in this memory
	// (nil: the host's).
	NewLocal() (exec.LocalExecutor, error)
}

// hostMemory is Memory over Config.Alloc/Free (the Go heap by default).
type hostMemory struct {
	alloc func(n int) []byte
	free  func(b []byte) error
}

func newHostMemory(alloc func(n int) []byte, free func(b []byte) error) hostMemory {
	if alloc == nil {
		alloc = func(n int) []byte { return make([]byte, n) }
		free = func([]byte) error { return nil }
	}
	return hostMemory{alloc, free}
}

func (h hostMemory) Alloc(n int64) (exec.Region, error) { return exec.HostRegion(h.alloc(int(n))), nil }
func (h hostMemory) Free(r exec.Region) error           { return h.free(r.Bytes()) }
func (h hostMemory) Write(dst exec.Region, b []byte) error {
	copy(dst.Bytes(), b)
	return nil
}
func (h hostMemory) Read(dst []byte, src exec.Region) error {
	copy(dst, src.Bytes())
	return nil
}
func (h hostMemory) NewLocal() (exec.LocalExecutor, error) { return nil, nil }
