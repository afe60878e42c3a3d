package sweep

import (
	"fmt"
	"strings"

	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// MoERow is one (algorithm, batch) prediction of dispatch or combine.
type MoERow struct {
	Algorithm      string   `json:"algorithm"`
	TokensPerRank  int      `json:"tokens_per_rank"`
	PredictedUS    *float64 `json:"predicted_us,omitempty"`
	InterNodeBytes int64    `json:"inter_node_bytes"`
	BusiestRail    string   `json:"busiest_rail,omitempty"`
	RailBytes      int64    `json:"busiest_rail_bytes"`
	Bottleneck     string   `json:"bottleneck,omitempty"`
	Error          string   `json:"error,omitempty"`
}

// MoEDoc is the goring sim document of dispatch or combine.
type MoEDoc struct {
	Collective string   `json:"collective"`
	Topology   string   `json:"topology"`
	Nodes      int      `json:"nodes"`
	NRanks     int      `json:"nranks"`
	TokenBytes int64    `json:"token_bytes"`
	TopK       int      `json:"topk"`
	Experts    int      `json:"experts"`
	Hot        string   `json:"hot,omitempty"`
	Results    []MoERow `json:"results"`
}

// PredictMoE is the row of spec, one routing's dispatch or combine at
// tokens tokens per rank, on t: its plan (fallback's where spec's
// algorithm does not serve the routing and fallback is set: auto's),
// verified, the bytes that cross nodes, and the simulator's time and
// busiest rail port. An algorithm that does not serve the routing, or a
// topology that cannot route the plan, is the row's error; a plan that
// fails otherwise or fails verification is the error returned.
func PredictMoE(spec sched.Spec, fallback string, t *topo.Topology, opt sim.Options, tokens int) (MoERow, error) {
	alg := spec.Algorithm
	row := MoERow{Algorithm: alg, TokensPerRank: tokens}
	plan, err := sched.Generate(spec)
	if sched.IsUnsupported(err) && fallback != "" {
		spec.Algorithm, row.Algorithm = fallback, fallback
		plan, err = sched.Generate(spec)
	}
	if err != nil && !sched.IsUnsupported(err) {
		return row, fmt.Errorf("%s/%s at %d tokens: %w", spec.Collective, alg, tokens, err)
	}
	var res *sim.Result
	if err == nil {
		var rep *sched.Report
		if rep, err = sched.Verify(plan); err != nil {
			return row, fmt.Errorf("%s/%s at %d tokens: generated plan failed verification: %w", spec.Collective, alg, tokens, err)
		}
		row.InterNodeBytes = rep.InterNodeBytes
		res, err = sim.Simulate(t, plan, opt) // a topology that cannot route it: a row error
	}
	if err != nil {
		row.Error = fmt.Sprintf("%s: %v", alg, err)
		return row, nil
	}
	us := res.TotalUS
	row.PredictedUS, row.Bottleneck = &us, res.Bottleneck
	for _, l := range res.Links {
		if strings.Contains(l.Name, "rail") && l.Bytes > row.RailBytes {
			row.RailBytes, row.BusiestRail = l.Bytes, l.Name
		}
	}
	return row, nil
}

// PredictMoEs appends to doc a row for every token count of counts and
// every algorithm of algs (PredictMoE with fallback), in that order: the
// points of one count side by side. specOf gives the spec of an
// algorithm at a token count, its routing drawn alike for every algorithm
// of a count; doc's token size is its routing's.
func (doc *MoEDoc) PredictMoEs(counts []int, algs []string, fallback string, t *topo.Topology, opt sim.Options,
	specOf func(alg string, tokens int) (sched.Spec, error)) error {
	for _, tokens := range counts {
		for _, alg := range algs {
			spec, err := specOf(alg, tokens)
			if err != nil {
				return err
			}
			doc.TokenBytes = spec.Routing.TokenBytes
			row, err := PredictMoE(spec, fallback, t, opt, tokens)
			if err != nil {
				return err
			}
			doc.Results = append(doc.Results, row)
		}
	}
	return nil
}
