package launch

import (
	"github.com/goring-hpc/goring/ucx"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// RankWorker is one rank's UCX worker in a job and the address its peers
// need to reach it. Joining has two halves because the address must travel
// before any connection can exist: OpenRankWorker makes the worker, the
// caller's bootstrap carries Address to every rank (goring bench: the
// coordinator's hello; the UCC team layer: UCC's out-of-band allgather of
// cards), and Connect builds the data plane from the gathered addresses.
// Both sides join through here so that a rank of goring bench and a rank of
// a UCC team reach their peers the same way.
type RankWorker struct {
	uctx    *ucx.Context
	Worker  *ucx.Worker
	Address []byte
	ownCtx  bool // OpenRailWorker's: Close releases the context too
}

// OpenRankWorker creates a worker of its own on uctx (one per rank or team:
// workers never share a tag space) and reads its address.
func OpenRankWorker(uctx *ucx.Context) (*RankWorker, error) {
	w, err := uctx.NewWorker(ucx.WorkerOptions{})
	if err != nil {
		return nil, err
	}
	addr, err := w.Address()
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	return &RankWorker{uctx: uctx, Worker: w, Address: addr}, nil
}

// Connect connects this worker of rank to every rank's (addrs[r] is rank
// r's Address, this rank's own included) and returns the transport, which
// the caller closes before the worker, and the memory types the context
// moves. peerErrorsTo picks the peers whose endpoints detect a dead peer
// (ucxmp.Options.PeerErrorsTo); nil leaves that to whoever watches the job.
func (rw *RankWorker) Connect(rank int, addrs [][]byte, peerErrorsTo func(peer int) bool) (*ucxmp.Transport, ucx.MemoryTypes, error) {
	return rw.ConnectReusing(rank, addrs, peerErrorsTo, nil)
}

// ConnectReusing is Connect taking endpoints kept from this worker's
// previous transport where cache holds them (ucxmp.EndpointCache).
func (rw *RankWorker) ConnectReusing(rank int, addrs [][]byte, peerErrorsTo func(peer int) bool, cache *ucxmp.EndpointCache) (*ucxmp.Transport, ucx.MemoryTypes, error) {
	mts, err := rw.uctx.MemoryTypes()
	if err != nil {
		return nil, mts, err
	}
	tr, err := ucxmp.New(rw.Worker, rank, addrs, ucxmp.Options{MemoryTypes: mts, PeerErrorsTo: peerErrorsTo, Endpoints: cache})
	if err != nil {
		return nil, mts, err
	}
	return tr, mts, nil
}

// Close releases the worker (not the context, which may serve other
// workers, unless OpenRailWorker made it for this worker alone).
func (rw *RankWorker) Close() error {
	err := rw.Worker.Close()
	if rw.ownCtx {
		if cerr := rw.uctx.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
