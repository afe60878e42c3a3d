package team

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
)

// moeCase is a routing of 4 ranks with the awkward parts: a rank that
// owns no token, a rank that holds no expert, several of a token's
// experts on one rank, odd row sizes.
type moeCase struct {
	name      string
	topk      int
	tokens    []int
	placement []int
}

var moeCases = []moeCase{
	{"top1 rank1 owns none", 1, []int{3, 0, 5, 2}, []int{0, 1, 2, 3}},
	{"top2 rank1 holds none", 2, []int{4, 3, 0, 5}, []int{0, 0, 0, 2, 2, 3}},
	{"top3 round robin", 3, []int{2, 2, 2, 2}, []int{0, 1, 2, 3, 0, 1, 2, 3}},
	{"top4 four on rank1", 4, []int{5, 1, 2, 0}, []int{1, 1, 1, 1, 3}},
}

// routing draws the case's expert ids (distinct per token) with seed.
func (c moeCase) routing(seed uint64, tokenBytes int64) *moe.Routing {
	rng := rand.New(rand.NewPCG(seed, 5))
	r := &moe.Routing{TokenBytes: tokenBytes, TopK: c.topk, Tokens: c.tokens, Placement: c.placement}
	for range r.NumTokens() {
		for _, e := range rng.Perm(len(c.placement))[:c.topk] {
			r.Experts = append(r.Experts, int32(e))
		}
	}
	return r
}

// refRows is the test's own reading of the contract: rank q's dispatch
// dst is, for each expert on q in ascending id, the (token, slot) pairs
// that picked it in global token order.
func refRows(r *moe.Routing, q int) [][2]int {
	var rows [][2]int
	for e, at := range r.Placement {
		if at != q {
			continue
		}
		for g := range r.NumTokens() {
			for j := range r.TopK {
				if int(r.Experts[g*r.TopK+j]) == e {
					rows = append(rows, [2]int{g, j})
				}
			}
		}
	}
	return rows
}

// tokenByte is byte x of global token g's row.
func tokenByte(g int, x int64) byte { return byte(g*37 + int(x)*11 + 1) }

// expertValue is element x of the expert output of token g's slot j: a
// small integer, so any order of a token's sum is exact in bfloat16,
// hashed over all three so that the elements of a row differ (an element
// moved within its row fails) and tokens 7 apart do not share their sums.
func expertValue(g, j int, x int64) float32 {
	h := uint64(g+1)*0x9e3779b97f4a7c15 ^ uint64(j+1)*0xc2b2ae3d27d4eb4f ^ uint64(x+1)*0x165667b19e3779f9
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 32
	return float32(int(h%7) - 3)
}

// putElem writes v as d (float32, or bfloat16 of an exactly
// representable value) at b.
func putElem(b []byte, d coll.Dtype, v float32) {
	if d == coll.Float32 {
		*(*float32)(unsafe.Pointer(&b[0])) = v
		return
	}
	*(*uint16)(unsafe.Pointer(&b[0])) = uint16(math.Float32bits(v) >> 16)
}

// runMoE makes, posts and polls one call per rank, as runAll does.
func runMoE(t *testing.T, teams []*Team, ms []MoEArgs) []string {
	t.Helper()
	return runColls(t, len(teams), func(r int) (*Coll, error) { return NewMoEColl(teams[r], ms[r]) })
}

// dispatchOnce runs a dispatch of r with alg and checks every expert row.
func dispatchOnce(t *testing.T, teams []*Team, r *moe.Routing, alg, name string) {
	n, H := len(teams), r.TokenBytes
	ms := make([]MoEArgs, n)
	dsts := make([][]byte, n)
	base := 0
	for q := range ms {
		src := cbuf(t, r.Tokens[q]*int(H))
		for i := range r.Tokens[q] {
			for x := range H {
				src[int64(i)*H+x] = tokenByte(base+i, x)
			}
		}
		base += r.Tokens[q]
		dsts[q] = cbuf(t, len(refRows(r, q))*int(H))
		for x := range dsts[q] {
			dsts[q][x] = 0xee // a row left unwritten shows
		}
		ms[q] = MoEArgs{Coll: coll.Dispatch, Routing: r, Src: ptr(src), Dst: ptr(dsts[q]), Mem: MemHost, Alg: alg}
	}
	algs := runMoE(t, teams, ms)
	for q := range dsts {
		require.Equal(t, cmp.Or(alg, moeDefault()), algs[q], "%s: rank %d ran another algorithm", name, q)
		for m, gj := range refRows(r, q) {
			for x := range H {
				require.Equal(t, tokenByte(gj[0], x), dsts[q][int64(m)*H+x], "%s %s: rank %d row %d (token %d slot %d) byte %d", name, algs[q], q, m, gj[0], gj[1], x)
			}
		}
	}
}

// combineOnce runs a combine of r in d with alg and checks every token's
// sum; it returns the ranks' dst bytes.
func combineOnce(t *testing.T, teams []*Team, r *moe.Routing, d coll.Dtype, alg, name string) [][]byte {
	return combineSkewed(t, teams, r, d, alg, name, func(int) int { return 0 })
}

// combineSkewed is combineOnce with rank q's buffers skew(q) bytes past
// an aligned address.
func combineSkewed(t *testing.T, teams []*Team, r *moe.Routing, d coll.Dtype, alg, name string, skew func(q int) int) [][]byte {
	n, H, es := len(teams), r.TokenBytes, int64(d.Size())
	ms := make([]MoEArgs, n)
	dsts := make([][]byte, n)
	for q := range ms {
		rows := refRows(r, q)
		src := cbuf(t, len(rows)*int(H)+8)[skew(q):][:len(rows)*int(H)]
		for m, gj := range rows {
			for x := range H / es {
				putElem(src[int64(m)*H+x*es:], d, expertValue(gj[0], gj[1], x))
			}
		}
		dsts[q] = cbuf(t, r.Tokens[q]*int(H)+8)[skew(q):][:r.Tokens[q]*int(H)]
		for x := range dsts[q] {
			dsts[q][x] = 0xee // a row left unwritten shows
		}
		ms[q] = MoEArgs{Coll: coll.Combine, Routing: r, Src: ptr(src), Dst: ptr(dsts[q]), Dtype: d, Mem: MemHost, Alg: alg}
	}
	algs := runMoE(t, teams, ms)
	want := make([]byte, es)
	base := 0
	for q := range dsts {
		for i := range r.Tokens[q] {
			g := base + i
			for x := range H / es {
				sum := float32(0)
				for j := range r.TopK {
					sum += expertValue(g, j, x)
				}
				putElem(want, d, sum)
				at := int64(i)*H + x*es
				require.Equal(t, want, dsts[q][at:at+es], "%s %s %s: rank %d token %d element %d (sum %g)", name, algs[q], d, q, i, x, sum)
			}
		}
		base += r.Tokens[q]
	}
	return dsts
}

// Dispatch and combine on 4 ranks of real UCX workers, every algorithm
// and the default, top-k 1 to 4, contents checked against the test's own
// reading of the contract.
func TestTeamMoE(t *testing.T) {
	teams := newTestTeams(t, 4, "")
	for ci, c := range moeCases {
		for _, alg := range []string{"", "unicast", "multiwrite", "nimble"} {
			name := fmt.Sprintf("%s alg=%q", c.name, alg)
			dispatchOnce(t, teams, c.routing(uint64(ci), int64(13+2*ci)), alg, name) // odd rows
			combineOnce(t, teams, c.routing(uint64(ci), 4*5), coll.Float32, alg, name)
			combineOnce(t, teams, c.routing(uint64(ci), 2*7), coll.Bfloat16, alg, name)
		}
	}
}

// A rank whose combine buffers start off the element size's alignment
// (MPI and frameworks allow any address) adds its rows like its peers:
// ranks 1 to 3 by 1 to 3 bytes, float32 and bfloat16, every algorithm.
func TestTeamCombineMisaligned(t *testing.T) {
	teams := newTestTeams(t, 4, "")
	c := moeCases[1]
	for _, alg := range []string{"", "unicast", "multiwrite", "nimble"} {
		name := fmt.Sprintf("%s alg=%q misaligned", c.name, alg)
		combineSkewed(t, teams, c.routing(5, 4*5), coll.Float32, alg, name, func(q int) int { return q % 4 })
		combineSkewed(t, teams, c.routing(5, 2*7), coll.Bfloat16, alg, name, func(q int) int { return q % 2 })
	}
}

// A lazy team's first call may be a dispatch: it is checked at once and
// built when the team has connected.
func TestLazyTeamMoE(t *testing.T) {
	teams := newLazyTeams(t, newLazyContexts(t, 4), 9)
	t.Cleanup(func() { // before the contexts close
		for _, tm := range teams {
			assert.NoError(t, tm.Destroy())
		}
	})
	c := moeCases[1]
	dispatchOnce(t, teams, c.routing(3, 9), "", "lazy")
	combineOnce(t, teams, c.routing(3, 8), coll.Float32, "", "lazy")
}

// Combine adds a token's rows in the plan's fixed order: the same inputs
// give the same bits on every run, where the sums round.
func TestTeamCombineRepeatsBits(t *testing.T) {
	teams := newTestTeams(t, 4, "")
	r := moeCases[3].routing(1, 4*33)
	n, H := len(teams), r.TokenBytes
	run := func() [][]byte {
		ms := make([]MoEArgs, n)
		dsts := make([][]byte, n)
		for q := range ms {
			rng := rand.New(rand.NewPCG(uint64(q), 77))
			src := cbuf(t, len(refRows(r, q))*int(H))
			for x := 0; x < len(src); x += 4 {
				putElem(src[x:], coll.Float32, float32(rng.NormFloat64()*1e3))
			}
			dsts[q] = cbuf(t, r.Tokens[q]*int(H))
			ms[q] = MoEArgs{Coll: coll.Combine, Routing: r, Src: ptr(src), Dst: ptr(dsts[q]), Dtype: coll.Float32, Mem: MemHost, Alg: "multiwrite"}
		}
		runMoE(t, teams, ms)
		return dsts
	}
	first := run()
	for range 3 {
		assert.Equal(t, first, run())
	}
}

// The layout a rank asks for is the rows the contract gives it.
func TestMoELayout(t *testing.T) {
	for ci, c := range moeCases {
		r := c.routing(uint64(ci), 8)
		for q := range r.Tokens {
			l, err := MoELayout(r, q, len(r.Tokens))
			require.NoError(t, err)
			rows := refRows(r, q)
			require.EqualValues(t, len(rows), l.Rows, "%s rank %d", c.name, q)
			per := make([]int64, len(r.Placement))
			for m, gj := range rows {
				require.EqualValues(t, gj[0]*r.TopK+gj[1], l.Slots[m], "%s rank %d row %d", c.name, q, m)
				per[r.Experts[gj[0]*r.TopK+gj[1]]]++
			}
			require.Equal(t, per, l.ExpertRows, "%s rank %d", c.name, q)
		}
	}
}

// Bad calls are refused on the rank that makes them, before anything
// moves, with the reason.
func TestTeamMoERefusals(t *testing.T) {
	teams := newTestTeams(t, 2, "")
	buf := cbuf(t, 1024)
	good := func() MoEArgs {
		r := &moe.Routing{TokenBytes: 8, TopK: 2, Tokens: []int{1, 1}, Placement: []int{0, 1, 1}, Experts: []int32{0, 1, 1, 2}}
		return MoEArgs{Coll: coll.Combine, Routing: r, Src: ptr(buf), Dst: ptr(buf), Dtype: coll.Float32, Mem: MemHost}
	}
	for _, c := range []struct {
		name   string
		edit   func(m *MoEArgs)
		status Status
		text   string
	}{
		{"expert out of range", func(m *MoEArgs) { m.Routing.Experts[3] = 3 }, StatusInvalid, "picks expert 3, out of range 0..2"},
		{"negative expert", func(m *MoEArgs) { m.Routing.Experts[0] = -1 }, StatusInvalid, "picks expert -1"},
		{"expert twice", func(m *MoEArgs) { m.Routing.Experts[1] = 0 }, StatusInvalid, "picks expert 0 twice"},
		{"top-k 0", func(m *MoEArgs) { m.Routing.TopK, m.Routing.Experts = 0, nil }, StatusInvalid, "top-k 0"},
		{"top-k over experts", func(m *MoEArgs) {
			m.Routing.TopK, m.Routing.Experts = 4, []int32{0, 1, 2, 0, 0, 1, 2, 0}
		}, StatusInvalid, "3 experts cannot serve top-4"},
		{"placement out of range", func(m *MoEArgs) { m.Routing.Placement[2] = 2 }, StatusInvalid, "placed on rank 2"},
		{"token counts", func(m *MoEArgs) { m.Routing.Tokens = []int{2} }, StatusInvalid, "token counts for 1 ranks, want 2"},
		{"ids short", func(m *MoEArgs) { m.Routing.Experts = m.Routing.Experts[:3] }, StatusInvalid, "3 expert ids for 2 tokens"},
		{"no routing", func(m *MoEArgs) { m.Routing = nil }, StatusInvalid, "no routing"},
		{"NULL src", func(m *MoEArgs) { m.Src = nil }, StatusInvalid, "NULL src"},
		{"NULL dst", func(m *MoEArgs) { m.Dst = nil }, StatusInvalid, "NULL dst"},
		{"float64", func(m *MoEArgs) { m.Dtype = coll.Float64 }, StatusNotSupported, "bfloat16 or float32, not float64"},
		{"odd row", func(m *MoEArgs) { m.Routing.TokenBytes = 6 }, StatusInvalid, "6-byte token rows"},
		{"not routed", func(m *MoEArgs) { m.Coll = coll.Allreduce }, StatusInvalid, "want dispatch or combine"},
		{"unknown algorithm", func(m *MoEArgs) { m.Alg = "ring" }, StatusInvalid, "ring"},
	} {
		m := good()
		c.edit(&m)
		_, err := NewMoEColl(teams[0], m)
		require.Error(t, err, c.name)
		assert.Equal(t, c.status, StatusOf(err), "%s: %v", c.name, err)
		assert.Contains(t, err.Error(), c.text, c.name)
	}
	// A rank with nothing on a side may pass NULL there.
	m := good()
	m.Routing.Tokens, m.Routing.Experts = []int{0, 2}, []int32{1, 2, 1, 2}
	m.Dst = nil // rank 0 owns no token: combine writes nothing there
	m.Src = nil // and holds expert 0, which no token picked
	c, err := NewMoEColl(teams[0], m)
	require.NoError(t, err)
	c.Finalize()
}

// Ranks that pass different routings (or algorithms) fail the call
// alike before any row moves, and the team runs its next call.
func TestTeamMoERanksDisagree(t *testing.T) {
	teams := newTestTeams(t, 4, "")
	c := moeCases[2]
	for _, odd := range []func(m *MoEArgs){
		func(m *MoEArgs) { m.Routing = c.routing(99, m.Routing.TokenBytes) }, // same counts, other ids
		func(m *MoEArgs) { m.Alg = "unicast" },
		func(m *MoEArgs) { m.Chunks = 2 }, // the same legs, in other pieces and tags
	} {
		ms := make([]MoEArgs, len(teams))
		colls := make([]*Coll, len(teams))
		for q := range ms {
			r := c.routing(1, 16)
			buf := cbuf(t, 16*len(r.Experts))
			ms[q] = MoEArgs{Coll: coll.Dispatch, Routing: r, Src: ptr(buf), Dst: ptr(buf), Mem: MemHost, Alg: "nimble"}
			if q == 2 {
				odd(&ms[q])
			}
			var err error
			colls[q], err = NewMoEColl(teams[q], ms[q])
			require.NoError(t, err, "rank %d", q)
			require.NoError(t, colls[q].Post())
		}
		failed := make([]error, len(colls))
		for polls, left := 0, len(colls); left > 0; polls++ {
			require.Less(t, polls, 5_000_000, "no progress")
			left = 0
			for q, cl := range colls {
				if failed[q] != nil {
					continue
				}
				done, err := cl.Test()
				require.False(t, done, "rank %d completed a call whose ranks disagree", q)
				if failed[q] = err; err == nil {
					left++
				}
			}
		}
		for q, err := range failed {
			assert.Equal(t, StatusInvalid, StatusOf(err), "rank %d: %v", q, err)
			assert.Contains(t, err.Error(), "rank 2 passed another routing", "rank %d", q)
			colls[q].Finalize()
		}
	}
	dispatchOnce(t, teams, c.routing(1, 16), "nimble", "after the failures")
}

// moeDefault is what a dispatch that names no algorithm runs: the one
// table's choice.
func moeDefault() string {
	ch, _ := choose.Measured(choose.Shape{Coll: coll.Dispatch, Host: true})
	return ch.Alg
}
