package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/units"
)

// moeFlags are dispatch's and combine's traffic flags, the same for plan,
// sim and bench (docs/contracts.md "Dispatch and combine"). --hot and
// --seed are alltoallv's flags (trafficFlags), read here as an expert's
// share of the tokens and the routing's draw.
type moeFlags struct {
	tokens, hidden, placement string
	routingOut                string // plan: write the routing's JSON here
	topk, experts             int
	set                       []string // the MoE flags given
	bytesSet                  bool     // --bytes given (dispatch and combine refuse it)
}

var moeFlagNames = []string{"tokens", "hidden-bytes", "topk", "experts", "placement"}

func (m *moeFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&m.tokens, "tokens", "", "dispatch/combine: tokens per rank (sim: a comma list)")
	fl.StringVar(&m.hidden, "hidden-bytes", "", "dispatch/combine: bytes of one token row, e.g. 7168 or 8KiB")
	fl.IntVar(&m.topk, "topk", 0, "dispatch/combine: experts per token")
	fl.IntVar(&m.experts, "experts", 0, "dispatch/combine: number of experts")
	fl.StringVar(&m.placement, "placement", "block", "dispatch/combine: expert placement: block, round_robin, or one rank per expert (0,0,1,...)")
	fl.StringVar(&m.routingOut, "routing-out", "", "dispatch/combine (plan): write the routing as JSON to FILE (for a baseline with the same counts)")
}

// observe records which MoE flags the command was given.
func (m *moeFlags) observe(cmd *cobra.Command) {
	m.set = m.set[:0]
	m.bytesSet = cmd.Flags().Changed("bytes")
	for _, n := range moeFlagNames {
		if cmd.Flags().Changed(n) {
			m.set = append(m.set, "--"+n)
		}
	}
}

// check refuses MoE flags on other collectives.
func (m *moeFlags) check(c coll.Collective) error {
	if !c.Routed() && len(m.set) > 0 {
		return fmt.Errorf("%s apply to dispatch and combine only", strings.Join(m.set, ", "))
	}
	return nil
}

// tokenCounts parses --tokens: one count, or (many) a comma list.
func (m *moeFlags) tokenCounts(many bool) ([]int, error) {
	if m.tokens == "" {
		return nil, errors.New("--tokens is required for dispatch and combine (tokens per rank)")
	}
	var out []int
	for _, s := range strings.Split(m.tokens, ",") {
		t, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || t < 0 {
			return nil, fmt.Errorf("--tokens %q: %q is not a token count (0 or more)", m.tokens, s)
		}
		out = append(out, t)
	}
	if !many && len(out) > 1 {
		return nil, fmt.Errorf("--tokens %q: give one count here", m.tokens)
	}
	return out, nil
}

// routing draws the routing of tokens per rank on n ranks; elem is the
// element size combine sums (token rows must hold whole elements).
func (m *moeFlags) routing(tr *trafficFlags, n, tokens int, elem int) (*moe.Routing, error) {
	if tr.counts != "" {
		return nil, errors.New("--counts applies to alltoallv only")
	}
	if m.hidden == "" || m.topk == 0 || m.experts == 0 {
		return nil, errors.New("dispatch and combine need --hidden-bytes, --topk and --experts (and --tokens)")
	}
	h, err := units.ParseBytes(m.hidden)
	if err != nil {
		return nil, fmt.Errorf("--hidden-bytes: %w", err)
	}
	if h <= 0 {
		return nil, fmt.Errorf("--hidden-bytes %s: want at least one byte", m.hidden)
	}
	if h%int64(elem) != 0 {
		return nil, fmt.Errorf("--hidden-bytes %d is not a whole number of %d-byte elements (--dtype)", h, elem)
	}
	if m.topk < 1 || m.experts < m.topk {
		return nil, fmt.Errorf("--topk %d of --experts %d: want 1 <= topk <= experts", m.topk, m.experts)
	}
	if m.experts > moe.MaxExperts {
		// Refused before the placement allocates one rank per expert.
		return nil, fmt.Errorf("--experts %d: at most %d", m.experts, moe.MaxExperts)
	}
	place, err := moe.ParsePlacement(m.placement, m.experts, n)
	if err != nil {
		return nil, fmt.Errorf("--placement: %w", err)
	}
	hot, err := moe.ParseHot(tr.hot)
	if err != nil {
		return nil, fmt.Errorf("--hot: %w", err)
	}
	return moe.Generate(moe.Options{NRanks: n, TokensPerRank: tokens, TokenBytes: h, TopK: m.topk, Experts: m.experts,
		Placement: place, Hot: hot, Seed: tr.seed})
}

// moeSpec is the plan spec of a dispatch or combine call.
func moeSpec(c coll.Collective, alg string, t *topo.Topology, dtype coll.Dtype, chunks, tokens int, m *moeFlags, tr *trafficFlags) (sched.Spec, error) {
	elem := 1
	if c == coll.Combine {
		if !coll.CombineSums(dtype) {
			return sched.Spec{}, fmt.Errorf("combine sums bfloat16 or float32 rows, not %v (--dtype)", dtype)
		}
		elem = dtype.Size()
	}
	r, err := m.routing(tr, t.NumGPUs(), tokens, elem)
	if err != nil {
		return sched.Spec{}, err
	}
	return sched.Spec{Collective: c, Algorithm: alg, Topo: t, Bytes: r.TokenBytes, DtypeBytes: elem, Chunks: chunks, Routing: r}, nil
}
