package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/cudaexec"
)

// useRailsMemory gives the testbed's data plane what device buffers need
// (bench.UseRailsMemory, which says how they move: docs/netns.md "GPU
// buffers"); rank 0 says in one line how they move inside a node. The
// closers release them, in order.
func useRailsMemory(f *benchFlags, rj *bench.RankJob, rank int, job *benchJob, mem bench.Memory, stderr io.Writer) ([]func(), error) {
	g, ok := mem.(*cudaexec.GPU)
	if !ok {
		return nil, errors.New("--netns --mem cuda: the rank's memory is not a GPU")
	}
	closers, localMovesCUDA, err := bench.UseRailsMemory(rj, g, rank, job.cfg.Topo, f.ipc, job.planner(rank))
	if err != nil {
		return nil, err
	}
	if rank == 0 {
		fmt.Fprintf(stderr, "goring: note: --netns --mem cuda: inside a node %s; between nodes device bytes are staged through pinned host memory onto the sender's rail\n", nodeDataPath(f.ipc, localMovesCUDA))
	}
	return closers, nil
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
