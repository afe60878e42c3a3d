package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/units"
)

func init() { subcommands = append(subcommands, newPlanCmd) }

type planFlags struct {
	alg     string
	topo    string
	nodes   int
	bytes   string
	dtype   string
	chunks  int
	intra   string
	root    int
	traffic trafficFlags
	moe     moeFlags
	json    bool
	svg     string
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan COLL --alg A --topo T [--nodes N] --bytes N [--json|--svg FILE]",
		Short: "generate, verify and show the per-rank programs of a collective",
		Long: `plan builds the goring.program/v1 programs of one collective call (package
sched), proves them with sched.Verify (matching, rendezvous completion, no
races, final contents) and prints a table per rank with the verification
summary. --json prints the program document only; --svg draws the steps of
every rank on a timeline of dependency rounds.

alltoallv traffic: --bytes N alone sends N bytes to every peer; --hot R:F makes
rank R receive fraction F of every rank's N*P bytes; --counts FILE reads a JSON
byte matrix; --seed S draws random counts (zeros included).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.traffic.observe(cmd)
			f.moe.observe(cmd)
			return runPlan(cmd, args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.alg, "alg", "auto", "algorithm name, or auto")
	fl.StringVar(&f.topo, "topo", "", "preset name ("+strings.Join(topo.PresetNames(), ", ")+") or goring.topo/v1 JSON file")
	fl.IntVar(&f.nodes, "nodes", 0, "repeat the node N times (default: as given)")
	fl.StringVar(&f.bytes, "bytes", "", "message size (UCC's meaning per collective), e.g. 1MiB")
	fl.StringVar(&f.dtype, "dtype", "float32", "element type")
	fl.IntVar(&f.chunks, "chunks", 0, "split long transfers into K pipelined pieces")
	fl.StringVar(&f.intra, "intra", "", "intra-node phase of parallel_rings (linear, btdd, btddh, knomial, iallgather_linear, rd, congestion_aware, auto)")
	fl.IntVar(&f.root, "root", 0, "bcast root rank")
	f.traffic.register(fl)
	f.moe.register(fl)
	fl.BoolVar(&f.json, "json", false, "print the goring.program/v1 document only")
	fl.StringVar(&f.svg, "svg", "", "draw the plan's timeline into FILE (SVG)")
	return cmd
}

// planSpec turns the flags into a sched.Spec.
func planSpec(cmd *cobra.Command, collName string, f *planFlags) (sched.Spec, error) {
	var spec sched.Spec
	c, err := coll.ParseCollective(collName)
	if err != nil {
		return spec, err
	}
	if f.json && f.svg != "" {
		return spec, errors.New("--json and --svg exclude each other")
	}
	if cmd.Flags().Changed("nodes") && f.nodes < 1 {
		return spec, fmt.Errorf("--nodes %d: want at least 1", f.nodes)
	}
	if f.chunks < 0 {
		return spec, fmt.Errorf("--chunks %d: want 0 or more", f.chunks)
	}
	dt, err := coll.ParseDtype(f.dtype)
	if err != nil {
		return spec, fmt.Errorf("--dtype: %w", err)
	}
	t, err := loadTopo(f.topo, f.nodes)
	if err != nil {
		return spec, err
	}
	n := t.NumGPUs()
	if err := f.moe.check(c); err != nil {
		return spec, err
	}
	if c.Routed() {
		return planMoESpec(cmd, c, t, dt, f)
	}
	var size int64
	if f.bytes != "" {
		if size, err = units.ParseBytes(f.bytes); err != nil {
			return spec, fmt.Errorf("--bytes: %w", err)
		}
	} else if c != coll.Alltoallv || f.traffic.counts == "" {
		return spec, errors.New("--bytes is required")
	}
	spec = sched.Spec{Collective: c, Algorithm: f.alg, Intra: f.intra, Topo: t, Bytes: size,
		DtypeBytes: dt.Size(), Chunks: f.chunks}
	if cmd.Flags().Changed("root") {
		if c != coll.Bcast {
			return spec, errors.New("--root applies to bcast only")
		}
		spec.Root = f.root
	}
	counts, err := f.traffic.matrix(c, n, int64(spec.DtypeBytes))
	if err != nil {
		return spec, err
	}
	if counts != nil && (f.traffic.hot != "" || f.traffic.counts != "" || f.traffic.seedSet) {
		if spec.Counts, err = counts(size); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

func runPlan(cmd *cobra.Command, collName string, f *planFlags) error {
	spec, err := planSpec(cmd, collName, f)
	if err != nil {
		return err
	}
	plan, err := generatePlan(spec)
	if err != nil {
		return err
	}
	rep, err := sched.Verify(plan)
	if err != nil {
		return fmt.Errorf("%s/%s: generated plan failed verification: %w", plan.Collective, plan.Algorithm, err)
	}
	if f.json {
		if plan.Note != "" {
			fmt.Fprintln(cmd.ErrOrStderr(), plan.Note)
		}
		return sched.WriteProgram(cmd.OutOrStdout(), plan)
	}
	if f.svg != "" {
		out, err := os.Create(f.svg)
		if err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
		err = writePlanSVG(out, plan)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--svg %s: %w", f.svg, err)
		}
	}
	printPlan(cmd.OutOrStdout(), spec, plan, rep)
	if spec.Collective.Routed() {
		printMoEPlan(cmd.OutOrStdout(), spec, plan, rep)
	}
	if f.svg != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "# timeline written to %s\n", f.svg)
	}
	return nil
}

// printPlan writes the OSU-style summary: a header, one row per rank, and
// the verification summary.
func printPlan(w io.Writer, spec sched.Spec, plan *sched.Plan, rep *sched.Report) {
	fmt.Fprintf(w, "# goring plan %s, algorithm %s, topology %s (%d nodes, %d ranks)\n",
		plan.Collective, plan.Algorithm, plan.Topology, spec.Topo.NumNodes(), plan.NRanks)
	size := units.FormatBytes(plan.Bytes)
	if plan.Collective == coll.Alltoallv && spec.Counts != nil {
		size = "counts matrix"
	}
	fmt.Fprintf(w, "# bytes %s, element %d bytes, chunks %d\n", size, plan.DtypeBytes, max(spec.Chunks, 1))
	if plan.Note != "" {
		fmt.Fprintf(w, "# %s\n", plan.Note)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tnode\tlocal\tsteps\tsends\tsent bytes\trecv bytes\tscratch bytes\t")
	for r := range plan.Ranks {
		rp := &plan.Ranks[r]
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", r, rp.Node, rp.Local, rep.StepsPerRank[r],
			rep.SendsPerRank[r], rep.SentBytes[r], rep.RecvBytes[r], rp.Sizes.Scratch)
	}
	tw.Flush()
	fmt.Fprint(w, rep.String())
}

// generatePlan is spec's plan; --alg auto is goring's one choice
// (choose.Generate) on the topology as the team layer would see it, a
// rank per GPU on device memory.
func generatePlan(spec sched.Spec) (*sched.Plan, error) {
	if spec.Algorithm != "auto" {
		return sched.Generate(spec)
	}
	return choose.Generate(spec, choose.OnTopology(spec.Collective, spec.Bytes, spec.Topo))
}
