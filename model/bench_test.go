package model

import (
	"syscall"
	"testing"
	"time"

	"github.com/goring-hpc/goring/topo"
)

// benchSplitter is clusterB (direct, gpu:2, gpu:3, host from GPU 0 to 1:
// the 4-path case of Multi-path model Figure 2(b)).
func benchSplitter(b *testing.B, o Options) *Splitter {
	b.Helper()
	tp, err := topo.Preset("clusterB")
	if err != nil {
		b.Fatal(err)
	}
	sp, err := NewSplitter(&tp.Nodes[0], o)
	if err != nil {
		b.Fatal(err)
	}
	if ps, _ := sp.Paths(0, 1); len(ps) != 4 {
		b.Fatalf("clusterB 0->1 has %d paths, want 4", len(ps))
	}
	return sp
}

// BenchmarkSplitCached is Algorithm 1's fast path: a configuration cached
// for the size class, rescaled to the message.
func BenchmarkSplitCached(b *testing.B) {
	sp := benchSplitter(b, DefaultOptions())
	const n = 64 << 20
	if _, err := sp.Split(0, 1, n, AllPaths, false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		s, _ := sp.Split(0, 1, n+4096, AllPaths, false)
		if !s.Cached {
			b.Fatal("not served from the cache")
		}
	}
}

// BenchmarkSplitUncached4Paths solves a 4-path split from scratch on every
// call (the per-pair path list and the threshold are built once).
func BenchmarkSplitUncached4Paths(b *testing.B) {
	o := DefaultOptions()
	o.DisableCache = true
	sp := benchSplitter(b, o)
	const n = 64 << 20
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		s, _ := sp.Split(0, 1, n, AllPaths, false)
		if s.Used() != 4 {
			b.Fatalf("used %d paths, want 4", s.Used())
		}
	}
}

// BenchmarkSplitExact4Paths is the reference solver on the same case.
func BenchmarkSplitExact4Paths(b *testing.B) {
	sp := benchSplitter(b, DefaultOptions())
	const n = 64 << 20
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := sp.Split(0, 1, n, AllPaths, true); err != nil {
			b.Fatal(err)
		}
	}
}

// reportCPU adds the process CPU time per operation (cpu-ns/op) to a
// benchmark: on a machine shared with other builds the wall-clock ns/op
// includes time spent waiting for a core, the CPU time does not.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
