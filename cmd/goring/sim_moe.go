package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/sweep"
)

// runSimMoE predicts dispatch or combine for each --tokens count and
// algorithm: the same routing (same --seed) for every algorithm of a
// count.
func runSimMoE(cmd *cobra.Command, c coll.Collective, f *simFlags) error {
	if err := f.moe.check(c); err != nil {
		return err
	}
	switch {
	case f.bytes != "":
		return fmt.Errorf("%s takes --hidden-bytes (one token row) and --tokens, not --bytes", c)
	case f.lanes != "" || f.gantt || f.png != "" || f.calib != "" || f.intra != "" || f.rankAvg:
		return fmt.Errorf("%s: --lanes, --gantt, --png, --calibration, --intra and --rank-avg are not supported", c)
	}
	counts, err := f.moe.tokenCounts(true)
	if err != nil {
		return err
	}
	dt, err := coll.ParseDtype(f.dtype)
	if err != nil {
		return fmt.Errorf("--dtype: %w", err)
	}
	t, err := loadTopo(f.topo, f.nodes)
	if err != nil {
		return err
	}
	algs, fallback, err := sweep.MoEAlgorithms(c, f.alg, t)
	if err != nil {
		return err
	}
	doc := &sweep.MoEDoc{Collective: string(c), Topology: t.Name, Nodes: t.NumNodes(), NRanks: t.NumGPUs(), TopK: f.moe.topk, Experts: f.moe.experts, Hot: f.traffic.hot}
	opt := sim.Options{CopyEngineSerial: f.serialCE}
	specOf := func(alg string, tokens int) (sched.Spec, error) {
		return moeSpec(c, alg, t, dt, f.chunks, tokens, &f.moe, &f.traffic)
	}
	if err := doc.PredictMoEs(counts, algs, fallback, t, opt, specOf); err != nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", " ")
		return enc.Encode(doc)
	}
	printSimMoE(cmd.OutOrStdout(), doc, algs)
	if len(doc.Results) == 0 {
		return errors.New("nothing simulated")
	}
	return nil
}

func printSimMoE(w io.Writer, doc *sweep.MoEDoc, algs []string) {
	hot := ""
	if doc.Hot != "" {
		hot = ", hot " + doc.Hot
	}
	fmt.Fprintf(w, "# goring sim %s on %s: %d nodes, %d ranks, %d-byte tokens, top-%d of %d experts%s (predicted)\n",
		doc.Collective, doc.Topology, doc.Nodes, doc.NRanks, doc.TokenBytes, doc.TopK, doc.Experts, hot)
	fmt.Fprintf(w, "# per algorithm: time, bytes crossing nodes (MiB), busiest rail port (MiB)\n")
	fmt.Fprintf(w, "%-8s", "# tokens")
	for _, a := range algs {
		fmt.Fprintf(w, " %16s %9s %9s", a+"(us)", "inter", "rail")
	}
	fmt.Fprintln(w)
	var errs []string
	for i := 0; i < len(doc.Results); i += len(algs) {
		fmt.Fprintf(w, "%-8d", doc.Results[i].TokensPerRank)
		for _, r := range doc.Results[i : i+len(algs)] {
			if r.PredictedUS == nil {
				fmt.Fprintf(w, " %16s %9s %9s", "-", "-", "-")
				if !contains(errs, r.Error) {
					errs = append(errs, r.Error)
				}
				continue
			}
			fmt.Fprintf(w, " %16.2f %9.2f %9.2f", *r.PredictedUS, float64(r.InterNodeBytes)/(1<<20), float64(r.RailBytes)/(1<<20))
		}
		fmt.Fprintln(w)
	}
	for _, e := range errs {
		fmt.Fprintf(w, "# not run: %s\n", e)
	}
}
