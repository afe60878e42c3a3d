package moe

import (
	"fmt"
	"math"
	"slices"
)

// MaxSlots bounds a routing's slots (tokens × top-k): a layout numbers
// them in int32 (Layout.SlotAt), and their sum must not overflow an int
// before the expert ids are checked against it.
const MaxSlots = math.MaxInt32

// MaxExperts bounds the experts a routing may place, as goring.h's entry
// does: thousands is a large model today, and a placement or a draw
// allocates per expert.
const MaxExperts = 1 << 24

// Routing is one MoE layer's token traffic.
//
// Token i of rank r has the global id Base(r)+i, ranks in order; its slot
// j (0 <= j < TopK) picks expert Experts[g*TopK+j]; expert e lives on rank
// Placement[e]. A token's experts are distinct, but any number of them
// may live on one rank.
type Routing struct {
	// TokenBytes is the size of one token row (hidden size × element size).
	TokenBytes int64 `json:"token_bytes"`
	TopK       int   `json:"topk"`
	// Tokens[r] is the number of tokens rank r owns (zero is allowed).
	Tokens []int `json:"tokens"`
	// Experts holds TopK expert ids per token, tokens in global order.
	Experts []int32 `json:"experts"`
	// Placement[e] is the rank that holds expert e.
	Placement []int `json:"placement"`
}

// NRanks is the number of ranks the routing spans.
func (r *Routing) NRanks() int { return len(r.Tokens) }

// NumTokens is the number of tokens of all ranks.
func (r *Routing) NumTokens() int {
	n := 0
	for _, t := range r.Tokens {
		n += t
	}
	return n
}

// Validate checks the routing for nranks ranks.
func (r *Routing) Validate(nranks int) error {
	if r == nil {
		return fmt.Errorf("moe: no routing")
	}
	if len(r.Tokens) != nranks {
		return fmt.Errorf("moe: token counts for %d ranks, want %d", len(r.Tokens), nranks)
	}
	if r.TokenBytes <= 0 {
		return fmt.Errorf("moe: token size %d bytes: want at least 1", r.TokenBytes)
	}
	if r.TopK < 1 {
		return fmt.Errorf("moe: top-k %d: want at least 1", r.TopK)
	}
	if len(r.Placement) < r.TopK {
		return fmt.Errorf("moe: %d experts cannot serve top-%d (a token's experts are distinct)", len(r.Placement), r.TopK)
	}
	for e, p := range r.Placement {
		if p < 0 || p >= nranks {
			return fmt.Errorf("moe: expert %d placed on rank %d, out of range 0..%d", e, p, nranks-1)
		}
	}
	slots := 0
	for q, t := range r.Tokens {
		if t < 0 {
			return fmt.Errorf("moe: rank %d owns %d tokens", q, t)
		}
		// Checked before the sum, which could otherwise wrap and match a
		// short list of expert ids.
		if t > (MaxSlots-slots)/r.TopK {
			return fmt.Errorf("moe: rank %d owns %d tokens: the routing's slots (tokens x top-%d) pass %d", q, t, r.TopK, MaxSlots)
		}
		slots += t * r.TopK
	}
	n := r.NumTokens()
	if len(r.Experts) != n*r.TopK {
		return fmt.Errorf("moe: %d expert ids for %d tokens of top-%d, want %d", len(r.Experts), n, r.TopK, n*r.TopK)
	}
	ne := int32(len(r.Placement))
	for g := 0; g < n; g++ {
		slots := r.Experts[g*r.TopK : (g+1)*r.TopK]
		for j, e := range slots {
			if e < 0 || e >= ne {
				return fmt.Errorf("moe: token %d slot %d picks expert %d, out of range 0..%d", g, j, e, ne-1)
			}
			if slices.Contains(slots[:j], e) {
				return fmt.Errorf("moe: token %d picks expert %d twice", g, e)
			}
		}
	}
	return nil
}
