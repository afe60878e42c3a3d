package team

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/coll"
)

// The context path end to end, as ctxpath.c drives it: lazy teams that
// never connect plan an allreduce for the shared worker (SharedProgram,
// which connects the members' shared endpoints), and the programs run
// in cexec on teams made on the contexts' shared workers; every rank's
// result is checked. A second team of the same members with another key
// runs on the same endpoints without Go connecting anything more.
func TestSharedProgramRunsOnTheContextsWorkers(t *testing.T) {
	const n, count = 3, 10
	ctxs := newLazyContexts(t, n)
	ranks := []uint32{0, 1, 2}
	for round, key := range []uint32{5 << 16, 6 << 16} {
		teams := newLazyTeams(t, ctxs, key)
		ct := make([]*cexec.Team, n)
		calls := make([]*cexec.Call, n)
		dsts := make([][]byte, n)
		for r, tm := range teams {
			src := cbuf(t, 4*count)
			dsts[r] = cbuf(t, 4*count)
			for k, v := 0, f32s(src); k < count; k++ {
				v[k] = float32(r*100 + k + round)
			}
			a := Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dsts[r]), Count: count, Dtype: coll.Float32, Op: coll.Sum, Mem: MemHost}
			p, err := tm.SharedProgram(a, ranks)
			require.NoError(t, err)
			require.NotNil(t, p, "rank %d: a small host allreduce is the context path's", r)
			assert.Nil(t, tm.rw, "planning for the context path opened the team's worker")
			ct[r], err = cexec.NewSharedTeam(ctxs[r].SharedC(), r, n, ranks, key)
			require.NoError(t, err)
			k := cexec.Key{Coll: 2, Count: count}
			_, err = ct[r].Put(k, p)
			require.NoError(t, err)
			p.Release()
			calls[r], err = ct[r].NewCall(k)
			require.NoError(t, err)
			require.NoError(t, calls[r].Post(a.Src, a.Dst))
		}
		deadline := time.Now().Add(10 * time.Second)
		for done := 0; done < n; {
			done = 0
			for r, c := range calls {
				st := c.Test()
				require.NotEqual(t, cexec.Failed, st, "rank %d: %v", r, c.Err())
				if st == cexec.Done {
					done++
				}
			}
			require.True(t, time.Now().Before(deadline), "context-path calls did not finish")
		}
		for r := range dsts {
			for k, v := range f32s(dsts[r]) {
				require.Equal(t, float32(300+3*k+3*round), v, "round %d rank %d element %d", round, r, k)
			}
			calls[r].Finalize()
			ct[r].Free()
			require.NoError(t, teams[r].Destroy())
		}
	}
}

// What the context path leaves to the team: device memory, calls above
// cpath_max, alltoallv; and a context with the C path off has no shared
// worker, so its teams plan nothing for it.
func TestSharedProgramLeavesToTheTeam(t *testing.T) {
	ctxs := newLazyContexts(t, 2)
	teams := newLazyTeams(t, ctxs, 9<<16)
	src, dst := cbuf(t, 1<<20), cbuf(t, 1<<20)
	ranks := []uint32{0, 1}
	base := Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: 16, Dtype: coll.Float32, Op: coll.Sum, Mem: MemHost}
	for name, a := range map[string]Args{
		"above cpath_max": func() Args { b := base; b.Count = 1 << 18; return b }(),
		"alltoall":        func() Args { b := base; b.Coll = coll.Alltoallv; b.A2A = UniformA2A(8, 2); return b }(),
		"device memory":   func() Args { b := base; b.Mem = MemCUDA; return b }(),
	} {
		p, err := teams[0].SharedProgram(a, ranks)
		assert.NoError(t, err, name)
		assert.Nil(t, p, name)
	}
	off, err := NewContext("cpath_max=0", testTable{})
	require.NoError(t, err)
	assert.Nil(t, off.SharedC())
	require.NoError(t, off.Close())
}
