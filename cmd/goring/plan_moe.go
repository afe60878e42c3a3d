package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// planMoESpec is planSpec for dispatch and combine: the routing's flags
// replace --bytes.
func planMoESpec(cmd *cobra.Command, c coll.Collective, t *topo.Topology, dt coll.Dtype, f *planFlags) (sched.Spec, error) {
	if f.bytes != "" {
		return sched.Spec{}, fmt.Errorf("%s takes --hidden-bytes (one token row), not --bytes", c)
	}
	if cmd.Flags().Changed("root") {
		return sched.Spec{}, errors.New("--root applies to bcast only")
	}
	tokens, err := f.moe.tokenCounts(false)
	if err != nil {
		return sched.Spec{}, err
	}
	spec, err := moeSpec(c, f.alg, t, dt, f.chunks, tokens[0], &f.moe, &f.traffic)
	if err == nil && f.moe.routingOut != "" {
		var b []byte
		if b, err = json.Marshal(spec.Routing); err == nil {
			err = os.WriteFile(f.moe.routingOut, append(b, '\n'), 0o644)
		}
		if err != nil {
			err = fmt.Errorf("--routing-out: %w", err)
		}
	}
	return spec, err
}

// printMoEPlan adds what a dispatch or combine plan moves: the routing's
// rows, the bytes crossing nodes, and for nimble the planner's time and
// split.
func printMoEPlan(w io.Writer, spec sched.Spec, plan *sched.Plan, rep *sched.Report) {
	r := spec.Routing
	lay, err := moe.NewLayout(r)
	if err != nil {
		fmt.Fprintf(w, "# routing: %v\n", err)
		return
	}
	rows := 0
	for _, x := range lay.RecvRows {
		rows += x
	}
	fmt.Fprintf(w, "# routing: %d tokens of %d bytes, top-%d of %d experts, %d expert rows; %d bytes cross nodes\n",
		r.NumTokens(), r.TokenBytes, r.TopK, len(r.Placement), rows, rep.InterNodeBytes)
	if plan.Algorithm != "nimble" {
		return
	}
	warm, cold, mw, err := bench.TimeNimblePlanner(spec)
	if err != nil {
		fmt.Fprintf(w, "# planner: %v\n", err)
		return
	}
	split := 0
	for i := range mw.Demands {
		if mw.Demands[i].Split() {
			split++
		}
	}
	fmt.Fprintf(w, "# planner: %.1f us for %d ranks (best of 20; %.1f us building the planner's network too), %d of %d demands split; busiest link %.1f -> %.1f us (%s)\n",
		float64(warm.Nanoseconds())/1e3, plan.NRanks, float64(cold.Nanoseconds())/1e3, split, len(mw.Demands), mw.MaxBeforeUS, mw.MaxAfterUS, mw.BottleneckAfter)
}
