package team

import (
	"errors"
	"sync"

	"github.com/goring-hpc/goring/launch"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// Reused workers. Opening a UCX worker costs milliseconds (12 ms on a
// 2-core Xeon with UCX 1.20's transports, tests/stack/robust.sh's split
// test), more than everything else a team does at its first call; an
// application that makes and frees communicators by the thousand, each
// running a collective on goring, would pay it every time. A team that
// ends cleanly hands its workers back to its context, and the next team
// that opens takes them.
//
// The set keeps its endpoints too (ucxmp.EndpointCache): a new team of the
// same processes finds its peers' reused workers at the same addresses
// and connects without creating an endpoint, as communicators made again
// and again over the same ranks do.
//
// Clean means no call was cut short: every message sent to a worker was
// then received by a call that completed, so the worker holds nothing a
// later team could match (its tags carry no team). A team whose call
// failed, was withdrawn in flight or while queued (a peer may have begun
// it) or was destroyed while queued closes its workers instead.

// workerSet is one team rank's workers: lane 0's, and lanes 1..W-1.
type workerSet struct {
	rw    *launch.RankWorker
	eps   *ucxmp.EndpointCache // rw's endpoints kept from its last team
	lanes []*teamLane          // transports released (tr nil), endpoints in each lane's eps
}

// workerPool keeps a few sets per context.
type workerPool struct {
	mu   sync.Mutex
	sets []workerSet
}

// maxPooledSets bounds what a context keeps: applications that hold many
// communicators at once open workers for each anyway.
const maxPooledSets = 4

// take returns a pooled set with lanes lanes (lane 0 included), if any.
func (p *workerPool) take(lanes int) (workerSet, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.sets {
		if len(s.lanes)+1 == lanes {
			p.sets = append(p.sets[:i], p.sets[i+1:]...)
			return s, true
		}
	}
	return workerSet{}, false
}

// put keeps s, or closes it when the pool is full.
func (p *workerPool) put(s workerSet) error {
	p.mu.Lock()
	if len(p.sets) < maxPooledSets {
		p.sets = append(p.sets, s)
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	return s.close()
}

func (s workerSet) close() error {
	errs := []error{s.eps.Close(), closeTeamLanes(s.lanes)}
	return errors.Join(append(errs, s.rw.Close())...)
}

// drain closes every pooled set (the context is going).
func (p *workerPool) drain() error {
	p.mu.Lock()
	sets := p.sets
	p.sets = nil
	p.mu.Unlock()
	var first error
	for _, s := range sets {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
