package bench

import (
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/topo"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// GPUWiring says how a rank's device buffers move, for the notes its
// rank 0 prints.
type GPUWiring struct {
	// Staged: the UCX in use moves no CUDA memory, so device messages
	// goring does not push itself go through pinned host memory, at most
	// MaxPinned bytes per rank (the team's stager or the rank's own).
	Staged    bool
	MaxPinned int64
	// Rails: the testbed's data plane (useRailsMemory), on whose node
	// transport UCX moves CUDA memory where LocalMovesCUDA.
	Rails, LocalMovesCUDA bool
}

// UseGPU gives rj's data plane what device buffers on g need. Through the
// team layer that is nothing: the team has its own push engine and host
// staging. On the testbed's rails see useRailsMemory. Otherwise the
// transport gets the push engine (ipc, splitting as planner says) for the
// peers of its host and host staging where UCX moves no CUDA memory. The
// closers release them, newest last.
func (rj *RankJob) UseGPU(g *cudaexec.GPU, rank int, tp *topo.Topology, ipc bool, planner cudaexec.Planner) (closers []func(), w GPUWiring, err error) {
	if len(rj.Data) > 0 {
		if _, ok := rj.Data[0].(*ucxmp.Rails); ok {
			closers, w.LocalMovesCUDA, err = useRailsMemory(rj, g, rank, tp, ipc, planner)
			w.Rails = true
			return closers, w, err
		}
	}
	tr := rj.Tr
	if rj.Teams != nil {
		if !tr.MovesCUDA() {
			w.Staged, w.MaxPinned = true, cudaexec.DefaultMaxPinned // the team's stager's bound
		}
		return nil, w, nil
	}
	if ipc {
		closers = append(closers, usePushEngine(tr, rj.Sess.Peers(), rank, planner))
	}
	if !tr.MovesCUDA() {
		closeStager, maxPinned, err := useStaging(tr, g)
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				closers[i]()
			}
			return nil, w, err
		}
		closers = append(closers, closeStager)
		w.Staged, w.MaxPinned = true, maxPinned
	}
	return closers, w, nil
}
