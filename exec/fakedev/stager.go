package fakedev

import (
	"fmt"

	"github.com/goring-hpc/goring/exec"
)

// Stager is the host-staging fallback (ucxmp.Stager) over the arena: host
// buffers from the Go heap, copies through the arena. Outstanding counts
// the buffers handed out and not released (a leak shows in tests).
type Stager struct {
	Arena       *Arena
	Outstanding int
	Staged      int // copies made, either way
}

// Buffer hands out n host bytes.
func (s *Stager) Buffer(n int64) ([]byte, error) {
	s.Outstanding++
	return make([]byte, n), nil
}

// Release takes a buffer back.
func (s *Stager) Release([]byte) { s.Outstanding-- }

// ToHost copies the device region src into b.
func (s *Stager) ToHost(b []byte, src exec.Region) error {
	got, err := s.Arena.Read(src)
	if err != nil {
		return err
	}
	if len(got) != len(b) {
		return fmt.Errorf("fakedev: staging %v into %d bytes", src, len(b))
	}
	s.Staged++
	copy(b, got)
	return nil
}

// ToDevice copies b into the device region dst.
func (s *Stager) ToDevice(dst exec.Region, b []byte) error {
	s.Staged++
	return s.Arena.Write(dst, b)
}
