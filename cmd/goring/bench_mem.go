package main

import (
	"fmt"
	"io"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/ucx"
)

// checkBenchMem validates --mem and --gpus before any rank starts: with
// --mem cuda and no driver, one line and exit 3 (as topo detect), nothing
// else printed.
func checkBenchMem(f *benchFlags) error {
	if err := checkMemWord(f.mem); err != nil {
		return err
	}
	m, _ := exec.ParseMem(f.mem)
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

// checkMemWord refuses a --mem other than the two words a bench job
// runs: host, or cuda (each rank's GPU round-robin: bench.RankSpec.CUDA).
// exec.ParseMem's other spellings ("cuda:0") would reach the ranks half
// understood, so every rank checks too (prepareBench).
func checkMemWord(mem string) error {
	if mem != "host" && mem != "cuda" {
		return fmt.Errorf("--mem %q: want host or cuda (ranks pick their GPU round-robin; see --gpus)", mem)
	}
	return nil
}

// gpuNote is rank 0's line on how device buffers move where goring does
// not push them itself: on the testbed, inside a node and between nodes;
// elsewhere, only where the UCX in use moves no CUDA memory, so that
// device messages goring does not push itself are staged (by bench's own
// stager, or the team's: team/gpu.go).
func gpuNote(stderr io.Writer, f *benchFlags, w bench.GPUWiring) {
	switch {
	case w.Rails:
		fmt.Fprintf(stderr, "goring: note: --netns --mem cuda: inside a node %s; between nodes device bytes are staged through pinned host memory onto the sender's rail\n", nodeDataPath(f.ipc, w.LocalMovesCUDA))
	case w.Staged:
		fmt.Fprintf(stderr, "goring: note: the UCX in use (%s) moves no CUDA memory; device messages goring does not push itself are staged through pinned host memory (at most %d MiB per rank)\n", ucx.Library(), w.MaxPinned>>20)
	}
}

// nodeDataPath names how device buffers move inside a node.
func nodeDataPath(ipc, ucxCUDA bool) string {
	switch {
	case ipc:
		return "goring's push engine (CUDA IPC) moves device buffers"
	case ucxCUDA:
		return "UCX's cuda transports move device buffers"
	default:
		return "device buffers are staged through host memory (the UCX in use moves no CUDA memory)"
	}
}
