package cexec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// sharedJob is n "processes" in one process, each with its shared worker
// (the context path's) and endpoints to every other's by context rank.
type sharedJob struct {
	*job
	shared []*Shared
}

func newSharedJob(t *testing.T, n int) *sharedJob {
	j := &sharedJob{job: newJob(t, n)}
	for r := 0; r < n; r++ {
		s, err := NewShared(j.workers[r])
		require.NoError(t, err)
		s.Lock()
		for p := 0; p < n; p++ {
			require.NoError(t, s.SetEndpoint(uint32(p), j.eps[r][p]))
		}
		s.Unlock()
		j.shared = append(j.shared, s)
	}
	t.Cleanup(func() {
		for _, s := range j.shared {
			s.Free() // before the job's workers close (registered first, runs last)
		}
	})
	return j
}

// TestSharedTeamsKeepApart runs two teams' calls at once on the same
// shared workers: the same members in another order (team rank r is
// context rank n-1-r in the second) and another key, the calls posted
// interleaved and tested together. Each rank's result must be its own
// team's, byte for byte, as the Go executor computes it: the tags tell
// the teams apart and the members' ranks map onto the right endpoints.
func TestSharedTeamsKeepApart(t *testing.T) {
	const n = 3
	j := newSharedJob(t, n)
	tp, err := topo.Synthetic("shared", 1, n, 1)
	require.NoError(t, err)
	dt, op := coll.Int32, coll.Sum
	rng := rand.New(rand.NewSource(3))
	orders := [][]uint32{{0, 1, 2}, {2, 1, 0}}
	keys := []uint32{7 << 16, 9<<16 | 1<<8}
	for _, c := range []coll.Collective{coll.Allreduce, coll.Allgather, coll.ReduceScatter} {
		for _, a := range sched.Algorithms(c) {
			spec := sched.Spec{Collective: c, Algorithm: a.Name, Topo: tp, Bytes: 12 * 4, DtypeBytes: 4}
			plan, err := sched.Generate(spec)
			if sched.IsUnsupported(err) {
				continue
			}
			require.NoError(t, err)
			name := fmt.Sprintf("%s/%s", c, a.Name)
			var calls []*Call
			var src, dst, want [][]byte
			teams := make([][]*Team, len(orders))
			for ti, order := range orders {
				inputs := make([][]byte, n)
				for r := range inputs {
					inputs[r] = make([]byte, plan.Ranks[r].Sizes.Src)
					for i := range inputs[r] {
						inputs[r][i] = byte(rng.Intn(50))
					}
				}
				w, err := memtransport.RunPlan(plan, dt, op, inputs)
				require.NoError(t, err, name)
				key := Key{Coll: 1, Dtype: uint8(dt), Op: uint8(op), Count: 12, Alg: a.Name}
				for r := 0; r < n; r++ {
					proc := order[r] // the process that is team rank r
					tm, err := NewSharedTeam(j.shared[proc], r, n, order, keys[ti])
					require.NoError(t, err, name)
					teams[ti] = append(teams[ti], tm)
					p, err := Lower(&plan.Ranks[r], a.Name, dt, op, Plain, false)
					require.NoError(t, err, name)
					_, err = tm.Put(key, p)
					require.NoError(t, err)
					p.Release()
					cl, err := tm.NewCall(key)
					require.NoError(t, err, name)
					calls = append(calls, cl)
					src = append(src, cBytes(t, inputs[r]))
					dst = append(dst, cBytes(t, make([]byte, plan.Ranks[r].Sizes.Dst)))
					want = append(want, w[r])
				}
			}
			// Interleave: team 0's rank 0, team 1's rank 0, ...
			order := make([]int, 0, len(calls))
			for r := 0; r < n; r++ {
				order = append(order, r, n+r)
			}
			ic, is, id := make([]*Call, len(calls)), make([][]byte, len(calls)), make([][]byte, len(calls))
			for i, k := range order {
				ic[i], is[i], id[i] = calls[k], src[k], dst[k]
			}
			runAll(t, ic, is, id)
			for k := range calls {
				require.Equal(t, want[k], dst[k], "%s team %d rank %d", name, k/n, k%n)
				calls[k].Finalize()
			}
			for _, ts := range teams {
				for _, tm := range ts {
					tm.Free()
				}
			}
		}
	}
}

// TestSharedTagsRefuseWhatTheyCannotName: a key whose scope or scope id
// does not fit 4 bits, or a team beyond SharedMaxSize, gets no tags; a
// member without an endpoint gets no team.
func TestSharedTagsRefuseWhatTheyCannotName(t *testing.T) {
	j := newSharedJob(t, 2)
	_, err := NewSharedTeam(j.shared[0], 0, 2, []uint32{0, 1}, 3<<16|16<<8)
	require.Error(t, err)
	_, err = NewSharedTeam(j.shared[0], 0, 2, []uint32{0, 1}, 3<<16|16)
	require.Error(t, err)
	_, err = NewSharedTeam(j.shared[0], 0, SharedMaxSize+1, make([]uint32, SharedMaxSize+1), 3<<16)
	require.Error(t, err)
	_, err = NewSharedTeam(j.shared[0], 0, 2, []uint32{0, 5}, 3<<16)
	require.ErrorContains(t, err, "no endpoint")
	tm, err := NewSharedTeam(j.shared[0], 0, 2, []uint32{0, 1}, 3<<16|15<<8|15)
	require.NoError(t, err)
	tm.Free()
}
