package sched

import (
	"testing"
	"unsafe"
)

// The plan of a 4096-rank Parallel Rings allgather holds tens of millions
// of steps; keep the step small.
func TestStepIsCompact(t *testing.T) {
	if got := unsafe.Sizeof(Step{}); got > 48 {
		t.Fatalf("Step is %d bytes, want at most 48", got)
	}
}
