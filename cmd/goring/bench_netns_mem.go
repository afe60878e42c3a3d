package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/cudaexec"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// GPU buffers on the testbed (goring bench --netns --mem cuda,
// docs/netns.md "GPU buffers"). Rank g of node k is rank k*L+l and uses GPU
// g % --gpus (rankGPU, as on one host): with a GPU per rank, node k's local
// rank l drives GPU k*L+l.
//
//   - Inside a node, the local transport carries device buffers as on one
//     host: goring's push engine (CUDA IPC, --ipc) with UCX's cuda
//     transports beside it for what the engine does not carry.
//   - Between nodes, a rail's transport moves host memory only
//     (connectRails): the sender copies its device bytes to pinned host
//     memory and sends that over its rail, the receiver receives into
//     pinned host memory and copies it to its GPU (ucxmp.Stager,
//     cudaexec.Stager). goring's own staging rather than UCX's CUDA-aware
//     TCP (cuda_copy beside tcp): the staging path is the one the code
//     already runs and tests where UCX moves no CUDA memory, it keeps the
//     rail contexts exactly those of the host runs, and its two copies
//     (tens of GB/s) are small beside a rail's rate.

// useRailsMemory gives the testbed's data plane what device buffers need:
// the push engine on the node's transport (--ipc), host staging on every
// rail and, where the UCX in use moves no CUDA memory, on the node's
// transport too. The closers release them, in order.
func useRailsMemory(f *benchFlags, rj *rankJob, rank int, job *benchJob, mem bench.Memory, stderr io.Writer) ([]func(), error) {
	if len(rj.data) != 1 {
		return nil, fmt.Errorf("--netns --mem cuda: one lane only (%d lanes)", len(rj.data))
	}
	rails, ok := rj.data[0].(*ucxmp.Rails)
	if !ok {
		return nil, errors.New("--netns --mem cuda: the data plane is not the testbed's rails")
	}
	g, ok := mem.(*cudaexec.GPU)
	if !ok {
		return nil, errors.New("--netns --mem cuda: the rank's memory is not a GPU")
	}
	var closers []func()
	local := rails.Local()
	if f.ipc {
		e := cudaexec.NewEngine()
		e.SetPlanner(job.planner(rank))
		// The local transport reaches the ranks of this node only; every
		// node's ranks share one hostname, so the rule is the node, not
		// the host (usePushEngine's).
		node, _, _ := job.cfg.Topo.Locate(rank)
		local.UseEngine(e, func(p int) bool { n, _, _ := job.cfg.Topo.Locate(p); return n == node })
		closers = append(closers, func() { _ = e.Close() })
	}
	st, err := cudaexec.NewStager(g.Mem().Device)
	if err != nil {
		for _, c := range closers {
			c()
		}
		return nil, err
	}
	closers = append(closers, func() { _ = st.Close() })
	for _, t := range rails.RailTransports() {
		t.UseStager(st)
	}
	if !local.MovesCUDA() {
		local.UseStager(st)
	}
	if rank == 0 {
		fmt.Fprintf(stderr, "goring: note: --netns --mem cuda: inside a node %s; between nodes device bytes are staged through pinned host memory onto the sender's rail\n", nodeDataPath(f.ipc, local.MovesCUDA()))
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
