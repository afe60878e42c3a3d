package sim

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaxMinProperty checks progressive filling against the definition of
// max-min fairness on random flow sets: the rates are feasible, and every
// flow crosses a saturated link on which no flow gets more than it does.
func TestMaxMinProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for c := range 200 {
		nl := 1 + rng.IntN(8)
		e := &engine{nw: &network{}}
		for range nl {
			e.nw.capBpus = append(e.nw.capBpus, 1+rng.Float64()*99)
		}
		e.onLink = make([][]int32, nl)
		nf := 1 + rng.IntN(12)
		for fi := range nf {
			perm := rng.Perm(nl)[:1+rng.IntN(min(nl, 3))]
			f := flow{}
			for _, l := range perm {
				f.links = append(f.links, int32(l))
				e.onLink[l] = append(e.onLink[l], int32(fi))
			}
			e.flows = append(e.flows, f)
		}
		e.fill.init(nl)
		// collect from every link so the whole set is one problem
		all := make([]int32, nl)
		for i := range all {
			all[i] = int32(i)
		}
		e.fill.collect(e, all)
		e.fill.solve(e)
		require.Len(t, e.fill.rates, nf, "case %d", c)
		rate := make([]float64, nf)
		for i, fi := range e.fill.flows {
			rate[fi] = e.fill.rates[i]
		}
		load := make([]float64, nl)
		for fi, f := range e.flows {
			assert.Positive(t, rate[fi], "case %d flow %d", c, fi)
			for _, l := range f.links {
				load[l] += rate[fi]
			}
		}
		for l := range nl {
			assert.LessOrEqual(t, load[l], e.nw.capBpus[l]*(1+1e-9), "case %d link %d over capacity", c, l)
		}
		for fi, f := range e.flows {
			ok := false
			for _, l := range f.links {
				if load[l] < e.nw.capBpus[l]*(1-1e-9) {
					continue
				}
				others := []float64{}
				for _, o := range e.onLink[l] {
					others = append(others, rate[o])
				}
				sort.Float64s(others)
				if rate[fi] >= others[len(others)-1]*(1-1e-9) {
					ok = true
				}
			}
			assert.True(t, ok, "case %d flow %d has no bottleneck link", c, fi)
		}
	}
}

// TestEventHeapOrder pops random events in (time, sequence) order.
func TestEventHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var q eventHeap
	var want []event
	for i := range 5000 {
		ev := event{t: float64(rng.IntN(300)), seq: uint64(i)}
		q.push(ev)
		want = append(want, ev)
		if rng.IntN(3) == 0 { // interleave pops with pushes
			sort.Slice(want, func(a, b int) bool { return want[a].before(&want[b]) })
			got := q.pop()
			require.Equal(t, want[0], got, "pop %d", i)
			want = want[1:]
		}
	}
	sort.Slice(want, func(a, b int) bool { return want[a].before(&want[b]) })
	for i := range want {
		require.Equal(t, want[i], q.pop(), "drain %d", i)
	}
	assert.Zero(t, q.Len())
}
