package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/ucx"
	"github.com/goring-hpc/goring/ucx_mp"
)

var _ ucxmp.DeviceEngine = (*cudaexec.Engine)(nil)

// usePushEngine gives tr goring's CUDA push engine for the peers on this
// rank's host (every rank of a local job; the emulated nodes of --nodes
// are one host too), splitting transfers as planner says (nil: never),
// and returns its closer.
func usePushEngine(tr *ucxmp.Transport, peers []launch.Peer, rank int, planner cudaexec.Planner) func() {
	e := cudaexec.NewEngine()
	e.SetPlanner(planner)
	self := peers[rank].Host
	tr.UseEngine(e, func(p int) bool { return peers[p].Host == self })
	return func() { _ = e.Close() }
}

// checkBenchMem validates --mem and --gpus before any rank starts: with
// --mem cuda and no driver, one line and exit 3 (as topo detect), nothing
// else printed.
func checkBenchMem(f *benchFlags) error {
	m, err := exec.ParseMem(f.mem)
	if err != nil || (m.Kind != exec.MemHost && m.Kind != exec.MemCUDA) || m.Device != 0 {
		return fmt.Errorf("--mem %q: want host or cuda (ranks pick their GPU round-robin; see --gpus)", f.mem)
	}
	if m.IsHost() {
		if f.gpus != 0 {
			return fmt.Errorf("--gpus %d needs --mem cuda", f.gpus)
		}
		return nil
	}
	n, err := cuda.DeviceCount()
	if cuda.IsNoDriver(err) {
		return withExit(3, fmt.Errorf("--mem cuda: %w", err))
	}
	if err != nil {
		return fmt.Errorf("--mem cuda: %w", err)
	}
	if n == 0 {
		return withExit(3, fmt.Errorf("--mem cuda: the CUDA driver sees no GPU"))
	}
	if f.gpus < 0 || f.gpus > n {
		return fmt.Errorf("--gpus %d: this machine has %d GPU(s)", f.gpus, n)
	}
	return nil
}

// rankGPU is the GPU of a rank with --mem cuda: rank % gpus, gpus being
// --gpus or, without it, every GPU the driver shows.
func rankGPU(f *benchFlags, rank int) (int, error) {
	gpus := f.gpus
	if gpus == 0 {
		n, err := cuda.DeviceCount()
		if err != nil {
			return 0, err
		}
		gpus = n
	}
	return rank % gpus, nil
}

// rankMemory is the bench.Memory of one rank for --mem: nil for host
// (the runner's Alloc/Free), else the rank's GPU, rank % gpus.
func rankMemory(f *benchFlags, rank int) (bench.Memory, func() error, error) {
	if f.mem == "host" || f.mem == "" {
		return nil, func() error { return nil }, nil
	}
	ord, err := rankGPU(f, rank)
	if err != nil {
		return nil, nil, err
	}
	g, err := cudaexec.Open(ord)
	if err != nil {
		return nil, nil, err
	}
	g.PollEvery = f.devicePoll
	// UCX's CUDA transports work in the thread's current context: this
	// rank drives UCX from this goroutine only, so pin it to its thread
	// and make the GPU's context current there once.
	runtime.LockOSThread()
	if err := g.Device().MakeCurrent(); err != nil {
		_ = g.Close()
		return nil, nil, err
	}
	return g, g.Close, nil
}

// useStaging gives tr the host-staging fallback when the UCX in use moves
// no CUDA memory (rank 0 says so in one line): device messages the push
// engine does not carry go through pinned host buffers.
func useStaging(tr *ucxmp.Transport, mem bench.Memory, rank int, stderr io.Writer) (func(), error) {
	g := mem.(*cudaexec.GPU)
	st, err := cudaexec.NewStager(g.Mem().Device)
	if err != nil {
		return nil, err
	}
	if rank == 0 {
		stagingNote(stderr, st.MaxPinned)
	}
	tr.UseStager(st)
	return func() { _ = st.Close() }, nil
}

// stagingNote is rank 0's line saying that the UCX in use moves no CUDA
// memory, so that device messages goring does not push itself are
// staged (by bench's own stager, or the team's: team/gpu.go).
func stagingNote(stderr io.Writer, maxPinned int64) {
	fmt.Fprintf(stderr, "goring: note: the UCX in use (%s) moves no CUDA memory; device messages goring does not push itself are staged through pinned host memory (at most %d MiB per rank)\n", ucx.Library(), maxPinned>>20)
}
