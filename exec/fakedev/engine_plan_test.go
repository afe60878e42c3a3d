package fakedev

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
)

// forcedSplit is a plan with hostPct percent of n on a host path in k
// chunks through slots slots, the rest direct.
func forcedSplit(t *testing.T, n int64, hostPct int64, k int, maxStage int64) *mpath.Plan {
	t.Helper()
	h := n * hostPct / 100
	split := model.Split{Bytes: n, Paths: []model.Share{
		{Path: model.Path{Name: model.DirectName, Beta1GBps: 100}, Bytes: n - h, Chunks: 1},
		{Path: model.Path{Name: model.HostName, Staged: true, Beta1GBps: 10, Beta2GBps: 10}, Bytes: h, Chunks: k},
	}}
	p, err := mpath.Build(split, maxStage)
	require.NoError(t, err)
	return p
}

// pushAll starts one transfer per (src, dst) pair from e to rank 1's
// buffers at once and polls until every one is done.
func pushAll(t *testing.T, a *Arena, e, peer *Engine, srcs, dsts []exec.Region) error {
	t.Helper()
	var tickets []uint64
	for i := range srcs {
		key, off, err := peer.Export(dsts[i])
		require.NoError(t, err)
		tk, err := e.Start(1, key, off, srcs[i], sched.Path{})
		require.NoError(t, err)
		tickets = append(tickets, tk)
	}
	for polls := 0; len(tickets) > 0; polls++ {
		require.Less(t, polls, 100000, "transfers never finish")
		for i := 0; i < len(tickets); i++ {
			done, err := e.Done(tickets[i])
			if err != nil {
				return err
			}
			if done {
				tickets = append(tickets[:i], tickets[i+1:]...)
				i--
			}
		}
	}
	return nil
}

func patterned(a *Arena, t *testing.T, dev int, n int64, seed byte) exec.Region {
	r := a.Alloc(dev, n)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ seed
	}
	require.NoError(t, a.Write(r, b))
	return r
}

// A plan is carried op by op at random: three transfers at once to one
// peer, sharing the host path's staging (two slots for five chunks, so
// slots are reused within a transfer and the buffer between transfers),
// arrive whole at odd sizes.
func TestEnginePlanDeliversEveryByte(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a := New(seed)
		e, peer := a.Engine(0), a.Engine(1)
		sizes := []int64{100003, 77777, 4099}
		e.SetPlanner(func(_ int, n int64, _ sched.Path) *mpath.Plan {
			return forcedSplit(t, n, 30, 5, 2*((n*30/100+4)/5))
		})
		var srcs, dsts []exec.Region
		for i, n := range sizes {
			srcs = append(srcs, patterned(a, t, 0, n, byte(i)))
			dsts = append(dsts, a.Alloc(1, n))
		}
		require.NoError(t, pushAll(t, a, e, peer, srcs, dsts))
		assert.Equal(t, len(sizes), e.Planned)
		for i := range sizes {
			want, _ := a.Read(srcs[i])
			got, _ := a.Read(dsts[i])
			require.True(t, bytes.Equal(want, got), "seed %d transfer %d", seed, i)
		}
	}
}

// The contents check catches a broken plan: a lost chunk leaves stale
// bytes; a slot rewritten before it drained (the drain waits removed)
// delivers some other chunk's bytes under random order.
func TestEnginePlanCatchesBrokenPlans(t *testing.T) {
	run := func(seed uint64, breakPlan func(*mpath.Plan)) bool {
		a := New(seed)
		e, peer := a.Engine(0), a.Engine(1)
		n := int64(50001)
		e.SetPlanner(func(_ int, n int64, _ sched.Path) *mpath.Plan {
			p := forcedSplit(t, n, 40, 6, (n*40/100+5)/6+1)
			breakPlan(p)
			return p
		})
		src, dst := patterned(a, t, 0, n, 7), a.Alloc(1, n)
		require.NoError(t, pushAll(t, a, e, peer, []exec.Region{src}, []exec.Region{dst}))
		want, _ := a.Read(src)
		got, _ := a.Read(dst)
		return bytes.Equal(want, got)
	}
	assert.False(t, run(1, func(p *mpath.Plan) { p.Ops = p.Ops[:len(p.Ops)-1]; p.Waited = p.Waited[:len(p.Ops)] }), "a lost chunk")
	wrong := 0
	for seed := uint64(1); seed <= 20; seed++ {
		if !run(seed, func(p *mpath.Plan) {
			for i := range p.Ops {
				if p.Ops[i].Hop == 0 {
					p.Ops[i].Waits = nil
				}
			}
		}) {
			wrong++
		}
	}
	assert.Positive(t, wrong, "a slot rewritten before it drained must show in some order")
}
