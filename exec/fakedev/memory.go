package fakedev

import "github.com/goring-hpc/goring/exec"

// Memory is one rank's buffers on fake device Dev of an arena, in the
// shape of bench.Memory: buffers the host cannot read, an out-of-order
// executor, patterns staged through Write and Read.
type Memory struct {
	Arena *Arena
	Dev   int
}

// Alloc returns n bytes on the device.
func (m Memory) Alloc(n int64) (exec.Region, error) { return m.Arena.Alloc(m.Dev, n), nil }

// Free keeps the bytes (the arena lives as long as the test).
func (m Memory) Free(exec.Region) error { return nil }

// Write copies b to the start of dst.
func (m Memory) Write(dst exec.Region, b []byte) error {
	return m.Arena.Write(dst.Slice(0, int64(len(b))), b)
}

// Read fills dst from the start of src.
func (m Memory) Read(dst []byte, src exec.Region) error {
	b, err := m.Arena.Read(src.Slice(0, int64(len(dst))))
	copy(dst, b)
	return err
}

// NewLocal is the arena's out-of-order executor.
func (m Memory) NewLocal() (exec.LocalExecutor, error) { return m.Arena.Local(), nil }
