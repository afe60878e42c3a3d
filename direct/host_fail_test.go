package direct

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// A rank whose part fails tells every rank so in its DONE, but a rank
// that hears of it must not return while another peer is still working:
// that peer may still read its source and write its result, and the
// caller, handed back a failed call, may free or reuse those buffers (a
// process_vm_writev into freed memory). Rank 1's reads fail at once;
// rank 2's are slow: no rank's call returns before every working peer
// has finished with its buffers.
func TestFailedCallWaitsForWorkingPeers(t *testing.T) {
	for _, c := range []coll.Collective{coll.Allreduce, coll.Allgather} {
		t.Run(string(c), func(t *testing.T) {
			const p = 3
			rng := rand.New(rand.NewPCG(7, 7))
			j := newHostJob(p, 1, 7)
			j.buffers(c, 1<<16, false, rng)
			for _, err := range j.run(c, coll.Float32, coll.Sum) {
				require.NoError(t, err) // the team's verdict, out of the way
			}
			j.s.mu.Lock()
			j.s.failPid, j.s.slow, j.s.ended = 101, map[int64]time.Duration{102: 20 * time.Millisecond}, map[int64]bool{}
			j.s.mu.Unlock()
			errs := j.run(c, coll.Float32, coll.Sum)
			for r, err := range errs {
				assert.Error(t, err, "rank %d", r)
				assert.NotErrorIs(t, err, exec.ErrDeadline, "rank %d waited for the failed one", r)
			}
			assert.Empty(t, j.s.late)
		})
	}
}
