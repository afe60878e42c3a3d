package bench

import (
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/topo"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// GPU buffers on the testbed (goring bench --netns --mem cuda,
// docs/netns.md "GPU buffers"). Rank g of node k is rank k*L+l and uses GPU
// g % gpus (RankGPU, as on one host): with a GPU per rank, node k's local
// rank l drives GPU k*L+l.
//
//   - Inside a node, the local transport carries device buffers as on one
//     host: goring's push engine (CUDA IPC) with UCX's cuda transports
//     beside it for what the engine does not carry.
//   - Between nodes, a rail's transport moves host memory only
//     (connectRails): the sender copies its device bytes to pinned host
//     memory and sends that over its rail, the receiver receives into
//     pinned host memory and copies it to its GPU (ucxmp.Stager,
//     cudaexec.Stager). goring's own staging rather than UCX's CUDA-aware
//     TCP (cuda_copy beside tcp): the staging path is the one the code
//     already runs and tests where UCX moves no CUDA memory, it keeps the
//     rail contexts exactly those of the host runs, and its two copies
//     (tens of GB/s) are small beside a rail's rate.

// useRailsMemory gives the testbed's data plane (rj, JoinRails) what
// device buffers on g need: the push engine on the node's transport (ipc,
// splitting as planner says), host staging on every rail and, where the
// UCX in use moves no CUDA memory, on the node's transport too. It returns
// the closers, in order, and whether UCX moves CUDA memory inside a node.
func useRailsMemory(rj *RankJob, g *cudaexec.GPU, rank int, tp *topo.Topology, ipc bool, planner cudaexec.Planner) (closers []func(), localMovesCUDA bool, err error) {
	if len(rj.Data) != 1 {
		return nil, false, fmt.Errorf("--netns --mem cuda: one lane only (%d lanes)", len(rj.Data))
	}
	rails, ok := rj.Data[0].(*ucxmp.Rails)
	if !ok {
		return nil, false, errors.New("--netns --mem cuda: the data plane is not the testbed's rails")
	}
	local := rails.Local()
	if ipc {
		e := cudaexec.NewEngine()
		e.SetPlanner(planner)
		// The local transport reaches the ranks of this node only; every
		// node's ranks share one hostname, so the rule is the node, not
		// the host (usePushEngine's).
		node, _, _ := tp.Locate(rank)
		local.UseEngine(e, func(p int) bool { n, _, _ := tp.Locate(p); return n == node })
		closers = append(closers, func() { _ = e.Close() })
	}
	st, err := cudaexec.NewStager(g.Mem().Device)
	if err != nil {
		for _, c := range closers {
			c()
		}
		return nil, false, err
	}
	closers = append(closers, func() { _ = st.Close() })
	for _, t := range rails.RailTransports() {
		t.UseStager(st)
	}
	if !local.MovesCUDA() {
		local.UseStager(st)
	}
	return closers, local.MovesCUDA(), nil
}
