package bench

import (
	"runtime"
	"time"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/launch"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// A rank's GPU and what its own transports need to move device memory
// (goring bench --mem cuda where bench runs its own executor; through the
// team layer the team has its own push engine and stager).

var _ ucxmp.DeviceEngine = (*cudaexec.Engine)(nil)

// RankGPU is the GPU of rank: rank % gpus, gpus being the count the ranks
// share round-robin or, when 0, every GPU the driver shows.
func RankGPU(gpus, rank int) (int, error) {
	if gpus == 0 {
		n, err := cuda.DeviceCount()
		if err != nil {
			return 0, err
		}
		gpus = n
	}
	return rank % gpus, nil
}

// OpenRankGPU opens rank's GPU (RankGPU) for its buffers, its executor
// polling every poll, and makes the GPU's context current on this
// goroutine's thread, to which it pins the goroutine.
func OpenRankGPU(gpus, rank int, poll time.Duration) (*cudaexec.GPU, error) {
	ord, err := RankGPU(gpus, rank)
	if err != nil {
		return nil, err
	}
	g, err := cudaexec.Open(ord)
	if err != nil {
		return nil, err
	}
	g.PollEvery = poll
	// UCX's CUDA transports work in the thread's current context: this
	// rank drives UCX from this goroutine only, so pin it to its thread
	// and make the GPU's context current there once.
	runtime.LockOSThread()
	if err := g.Device().MakeCurrent(); err != nil {
		_ = g.Close()
		return nil, err
	}
	return g, nil
}

// usePushEngine gives tr goring's CUDA push engine for the peers on this
// rank's host (every rank of a local job; emulated nodes are one host
// too), splitting transfers as planner says (nil: never), and returns its
// closer.
func usePushEngine(tr *ucxmp.Transport, peers []launch.Peer, rank int, planner cudaexec.Planner) func() {
	e := cudaexec.NewEngine()
	e.SetPlanner(planner)
	self := peers[rank].Host
	tr.UseEngine(e, func(p int) bool { return peers[p].Host == self })
	return func() { _ = e.Close() }
}

// useStaging gives tr the host-staging fallback for a UCX that moves no
// CUDA memory: device messages the push engine does not carry go through
// pinned host buffers of g's device, at most the returned bytes per rank.
func useStaging(tr *ucxmp.Transport, g *cudaexec.GPU) (closer func(), maxPinned int64, err error) {
	st, err := cudaexec.NewStager(g.Mem().Device)
	if err != nil {
		return nil, 0, err
	}
	tr.UseStager(st)
	return func() { _ = st.Close() }, st.MaxPinned, nil
}
