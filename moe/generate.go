package moe

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Options describe a synthetic routing.
type Options struct {
	NRanks        int
	TokensPerRank int
	TokenBytes    int64
	TopK          int
	Experts       int
	// Placement maps expert → rank; nil places experts in equal contiguous
	// blocks (BlockPlacement).
	Placement []int
	// Hot[e] = f makes expert e the pick of a fraction f of all tokens
	// (a hot expert, NIMBLE section V-D's skew); the others share the
	// remaining picks uniformly.
	Hot  map[int]float64
	Seed uint64
}

// Generate draws a routing: every token picks its hot experts with their
// probabilities, then fills its top-k with distinct experts drawn
// uniformly from the rest. The same options give the same routing.
func Generate(o Options) (*Routing, error) {
	if o.NRanks < 1 || o.TokensPerRank < 0 || o.TopK < 1 || o.Experts < o.TopK || o.TokenBytes < 1 {
		return nil, fmt.Errorf("moe: %d ranks, %d tokens per rank, top-%d of %d experts, %d-byte tokens: want ranks >= 1, tokens >= 0, 1 <= top-k <= experts, tokens of at least 1 byte",
			o.NRanks, o.TokensPerRank, o.TopK, o.Experts, o.TokenBytes)
	}
	if o.Experts > MaxExperts {
		return nil, fmt.Errorf("moe: %d experts: at most %d", o.Experts, MaxExperts)
	}
	if o.TokensPerRank > MaxSlots/o.TopK/o.NRanks {
		return nil, fmt.Errorf("moe: %d ranks of %d tokens, top-%d: the routing's slots (tokens x top-k) pass %d", o.NRanks, o.TokensPerRank, o.TopK, MaxSlots)
	}
	place := o.Placement
	if place == nil {
		place = BlockPlacement(o.Experts, o.NRanks)
	}
	if len(place) != o.Experts {
		return nil, fmt.Errorf("moe: placement names %d experts, want %d", len(place), o.Experts)
	}
	hot := make([]int, 0, len(o.Hot))
	sum := 0.0
	for e, f := range o.Hot {
		if e < 0 || e >= o.Experts {
			return nil, fmt.Errorf("moe: hot expert %d out of range 0..%d", e, o.Experts-1)
		}
		if !(f >= 0 && f <= 1) {
			return nil, fmt.Errorf("moe: hot expert %d gets a fraction %g of the tokens: want 0..1", e, f)
		}
		hot = append(hot, e)
		sum += f
	}
	if len(hot) > o.TopK {
		return nil, fmt.Errorf("moe: %d hot experts but a token picks only %d", len(hot), o.TopK)
	}
	if len(hot) == o.Experts && sum < float64(o.TopK) {
		return nil, fmt.Errorf("moe: every expert is hot but their fractions (sum %g) cannot fill top-%d", sum, o.TopK)
	}
	// Where some experts are not hot, a token fills its top-k from those
	// alone, after the hot experts it drew: one that draws only the sure
	// ones (fraction 1) must still find enough, or the draw never ends.
	if len(hot) < o.Experts {
		sure := 0
		for _, e := range hot {
			if o.Hot[e] >= 1 {
				sure++
			}
		}
		if others := o.Experts - len(hot); others < o.TopK-sure {
			return nil, fmt.Errorf("moe: %d hot experts leave %d others, but a token that draws only %d hot ones needs %d of them for its top-%d",
				len(hot), others, sure, o.TopK-sure, o.TopK)
		}
	}
	sort.Ints(hot)
	rng := rand.New(rand.NewPCG(o.Seed, 0x6d6f65))
	n := o.NRanks * o.TokensPerRank
	r := &Routing{TokenBytes: o.TokenBytes, TopK: o.TopK, Tokens: make([]int, o.NRanks), Placement: place,
		Experts: make([]int32, 0, n*o.TopK)}
	for q := range r.Tokens {
		r.Tokens[q] = o.TokensPerRank
	}
	isHot := make([]bool, o.Experts)
	for _, e := range hot {
		isHot[e] = true
	}
	picked := make([]bool, o.Experts)
	for g := 0; g < n; g++ {
		clear(picked)
		row := r.Experts[len(r.Experts):len(r.Experts)]
		for _, e := range hot {
			if rng.Float64() < o.Hot[e] {
				row = append(row, int32(e))
				picked[e] = true
			}
		}
		for len(row) < o.TopK {
			e := rng.IntN(o.Experts)
			if picked[e] || (isHot[e] && len(hot) < o.Experts) {
				continue
			}
			row = append(row, int32(e))
			picked[e] = true
		}
		r.Experts = r.Experts[:len(r.Experts)+o.TopK]
	}
	return r, nil
}

// BlockPlacement puts experts in contiguous blocks of equal size (the
// first experts%ranks ranks get one more): expert e on rank e*ranks/experts.
func BlockPlacement(experts, ranks int) []int {
	p := make([]int, experts)
	for e := range p {
		p[e] = e * ranks / experts
	}
	return p
}

// RoundRobinPlacement puts expert e on rank e mod ranks.
func RoundRobinPlacement(experts, ranks int) []int {
	p := make([]int, experts)
	for e := range p {
		p[e] = e % ranks
	}
	return p
}

// ParsePlacement reads "block", "round_robin" or an explicit list of one
// rank per expert ("0,0,1,3").
func ParsePlacement(s string, experts, ranks int) ([]int, error) {
	switch s {
	case "", "block":
		return BlockPlacement(experts, ranks), nil
	case "round_robin":
		return RoundRobinPlacement(experts, ranks), nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != experts {
		return nil, fmt.Errorf("placement %q: %d ranks listed for %d experts (or use block, round_robin)", s, len(parts), experts)
	}
	p := make([]int, experts)
	for e, x := range parts {
		q, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || q < 0 || q >= ranks {
			return nil, fmt.Errorf("placement %q: expert %d on %q: want a rank 0..%d", s, e, x, ranks-1)
		}
		p[e] = q
	}
	return p, nil
}

// ParseHot reads "E:F[,E:F...]": expert E is picked by a fraction F of the
// tokens.
func ParseHot(s string) (map[int]float64, error) {
	out := map[int]float64{}
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		e, f, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("hot %q: want EXPERT:FRACTION, e.g. 0:0.7", part)
		}
		id, err := strconv.Atoi(strings.TrimSpace(e))
		if err != nil || id < 0 {
			return nil, fmt.Errorf("hot %q: expert %q is not a non-negative integer", part, e)
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x >= 0 && x <= 1) {
			return nil, fmt.Errorf("hot %q: fraction %q: want a number in 0..1", part, f)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("hot %q: expert %d named twice", s, id)
		}
		out[id] = x
	}
	return out, nil
}
