package moe

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The layout by hand: 2 ranks, 2 tokens each, top-2 of 4 experts, experts
// 0,1 on rank 0 and 2,3 on rank 1.
func TestLayoutByHand(t *testing.T) {
	r := &Routing{TokenBytes: 8, TopK: 2, Tokens: []int{2, 2}, Placement: []int{0, 0, 1, 1},
		Experts: []int32{
			1, 2, // token 0 (rank 0)
			0, 1, // token 1 (rank 0)
			3, 1, // token 2 (rank 1)
			2, 3, // token 3 (rank 1)
		}}
	l, err := NewLayout(r)
	require.NoError(t, err)
	// rank 0: expert 0 gets token 1; expert 1 gets tokens 0, 1, 2.
	// rank 1: expert 2 gets tokens 0, 3; expert 3 gets tokens 2, 3.
	require.Equal(t, []int{4, 4}, l.RecvRows)
	require.Equal(t, []int32{2, 0, 3, 5}, l.SlotAt[0])
	require.Equal(t, []int32{1, 6, 4, 7}, l.SlotAt[1])
	require.Equal(t, [][]int64{{2, 1}, {1, 2}}, l.PairRows())
	require.Equal(t, []int{0, 1}, l.Dests(0, nil))
	require.Equal(t, []int{0, 1}, l.Dests(2, nil))
	require.Equal(t, []int{5}, l.SlotsOn(2, 0, nil), "slot 5 (expert 1) is on rank 0")
}

func TestValidateRejects(t *testing.T) {
	ok := func() *Routing {
		return &Routing{TokenBytes: 8, TopK: 2, Tokens: []int{1, 0}, Placement: []int{0, 1, 1}, Experts: []int32{0, 2}}
	}
	require.NoError(t, ok().Validate(2))
	for name, mut := range map[string]func(r *Routing){
		"repeat":    func(r *Routing) { r.Experts[1] = 0 },
		"range":     func(r *Routing) { r.Experts[1] = 3 },
		"placement": func(r *Routing) { r.Placement[0] = 2 },
		"count":     func(r *Routing) { r.Tokens[1] = 1 },
		"bytes":     func(r *Routing) { r.TokenBytes = 0 },
		"topk":      func(r *Routing) { r.TopK = 4 },
	} {
		r := ok()
		mut(r)
		require.Error(t, r.Validate(2), name)
	}
}

func TestGenerateHotFraction(t *testing.T) {
	r, err := Generate(Options{NRanks: 8, TokensPerRank: 1000, TokenBytes: 16, TopK: 4, Experts: 32, Hot: map[int]float64{5: 0.7}, Seed: 1})
	require.NoError(t, err)
	require.NoError(t, r.Validate(8))
	hot := 0
	per := make([]int, 32)
	for _, e := range r.Experts {
		per[e]++
		if e == 5 {
			hot++
		}
	}
	require.InDelta(t, 0.7, float64(hot)/8000, 0.03)
	for e, c := range per {
		if e != 5 { // the rest share (4-0.7)/31 of the tokens each
			require.InDelta(t, 8000*3.3/31, float64(c), 150, "expert %d", e)
		}
	}
	again, _ := Generate(Options{NRanks: 8, TokensPerRank: 1000, TokenBytes: 16, TopK: 4, Experts: 32, Hot: map[int]float64{5: 0.7}, Seed: 1})
	require.Equal(t, r.Experts, again.Experts)
}

func TestParse(t *testing.T) {
	p, err := ParsePlacement("round_robin", 5, 2)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 0, 1, 0}, p)
	require.Equal(t, []int{0, 0, 0, 1, 1}, BlockPlacement(5, 2))
	_, err = ParsePlacement("0,1", 3, 2)
	require.ErrorContains(t, err, "2 ranks listed for 3 experts")
	_, err = ParsePlacement("0,1,5", 3, 2)
	require.ErrorContains(t, err, "want a rank 0..1")
	h, err := ParseHot("0:0.7,3:0.1")
	require.NoError(t, err)
	require.Equal(t, map[int]float64{0: 0.7, 3: 0.1}, h)
	for _, bad := range []string{"0", "x:0.1", "0:1.5", "0:0.1,0:0.2"} {
		_, err := ParseHot(bad)
		require.Error(t, err, bad)
	}
}

// A token that draws none of its hot experts fills its top-k from the
// others alone; with too few of them the draw never ended. Each case
// runs in its own goroutine, so a hang fails the test's own timeout
// rather than this check.
func TestGenerateRefusesTooFewColdExperts(t *testing.T) {
	for _, c := range []struct {
		experts, topk int
		hot           map[int]float64
	}{
		{2, 2, map[int]float64{0: 0.5}},           // one other expert for two picks
		{4, 3, map[int]float64{0: 0.1, 1: 0.1}},   // two others for three picks
		{3, 3, map[int]float64{0: 1, 1: 0.5}},     // expert 0 always, then two of one other
		{8, 3, map[int]float64{0: 0, 1: 0, 2: 0}}, // fine: five others
		{3, 3, map[int]float64{0: 1, 1: 1}},       // fine: both always, then the third
	} {
		_, err := Generate(Options{NRanks: 2, TokensPerRank: 64, TokenBytes: 8, TopK: c.topk, Experts: c.experts, Hot: c.hot, Seed: 3})
		others, sure := c.experts-len(c.hot), 0
		for _, f := range c.hot {
			if f >= 1 {
				sure++
			}
		}
		if others < c.topk-sure {
			require.ErrorContains(t, err, "hot experts leave", "%+v", c)
		} else {
			require.NoError(t, err, "%+v", c)
		}
	}
}

// Sizes past the int32 slot numbers of a layout are refused before
// anything is allocated for them, and token counts whose slots would
// wrap an int cannot match a short list of expert ids.
func TestRoutingSizeBounds(t *testing.T) {
	_, err := Generate(Options{NRanks: 4, TokensPerRank: 1 << 40, TokenBytes: 8, TopK: 2, Experts: 8})
	require.ErrorContains(t, err, "slots")
	_, err = Generate(Options{NRanks: 4, TokensPerRank: 4, TokenBytes: 8, TopK: 2, Experts: MaxExperts + 1})
	require.ErrorContains(t, err, "experts")
	wrap := &Routing{TokenBytes: 8, TopK: 2, Tokens: []int{1 << 62, 1 << 62}, Placement: []int{0, 1}}
	require.ErrorContains(t, wrap.Validate(2), "slots")
	big := &Routing{TokenBytes: 8, TopK: 1, Tokens: []int{MaxSlots, 1}, Placement: []int{0, 1}}
	require.ErrorContains(t, big.Validate(2), "slots")
}
