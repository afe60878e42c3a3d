package team

import (
	"fmt"
	"time"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/launch"
)

// watchEvery is how often a waiting collective checks that the processes
// of its peers on this host still run: a dead peer is reported within
// this time, and a check (one /proc read per peer) costs microseconds.
const watchEvery = exec.WatchEvery

// peerWatch is the team's exec.Watch: it checks the peers that share this
// host by their process (pid and start time from their cards). A late peer
// is alive and is waited for as long as it takes; a peer whose process
// ended fails the collective with its rank and pid named, even if it had
// done its part: MPI ranks leave together (MPI_Finalize), so a process
// gone while its team runs a collective has died, and a survivor waiting
// on another survivor whose call failed must not wait forever.
type peerWatch struct {
	peers []card
	ranks []int
}

// newPeerWatch watches every rank of cards on self's host except self and
// ranks whose card carries no pid; nil when there is none to watch.
func newPeerWatch(self int, cards []card) exec.Watch {
	w := &peerWatch{}
	for r, c := range cards {
		if r == self || c.host != cards[self].host || c.pid == 0 {
			continue
		}
		w.peers = append(w.peers, c)
		w.ranks = append(w.ranks, r)
	}
	if len(w.peers) == 0 {
		return nil
	}
	return w
}

func (w *peerWatch) Every() time.Duration { return watchEvery }

// Check implements exec.Watch.
func (w *peerWatch) Check() error {
	for i, c := range w.peers {
		ok, err := launch.Alive(c.pid, c.start)
		if err != nil {
			continue // the table could not be read: no verdict, not a death
		}
		if !ok {
			return fmt.Errorf("%w: rank %d (pid %d on %s) has exited", errPeerFailed, w.ranks[i], c.pid, c.host)
		}
	}
	return nil
}
