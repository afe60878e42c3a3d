package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/tune"
	"github.com/goring-hpc/goring/units"
)

func init() { modelSubcommands = append(modelSubcommands, newModelScoresCmd) }

// modelScoresFlags are the flags of "goring model scores".
type modelScoresFlags struct {
	np       int
	gpus     int
	cpathMax string
	calib    string
	lanes    int
	crossmem int
	gpuModel string
	layers   string
	claims   string
	asJSON   bool
}

func newModelScoresCmd() *cobra.Command {
	var f modelScoresFlags
	c := &cobra.Command{
		Use:   "scores --np N [--gpus G [--gpu-model NAME] [--layers L] [--claims FILE]] [--calibration FILE] [--cpath-max 64K] [--lanes W] [--crossmem T] [--json]",
		Short: "which collectives and sizes goring's UCC team layer claims from tl/ucp on a team of one host, and why",
		Long: `scores prints what goring's team layer computes when UCC creates a team of
--np ranks on one host (docs/ucc.md "Default scores from the model"): for host
memory and, with --gpus, CUDA memory (--gpus 1: the ranks share one GPU; at
least --np: a GPU per rank), and for allgather, allreduce, reduce_scatter and
bcast at every size from 4 B to 1 GiB per rank, the algorithm goring would run
and the one UCC's tl/ucp runs by default, each predicted by the simulator with
its layer's call and message costs, and whether goring claims the size (its
prediction at most 0.95 of tl/ucp's). The last line is the UCC score string the
team layer applies. --calibration FILE (goring bench p2p --calibration-out, of
a machine with --gpus GPUs, a rank per GPU) puts the measured links under the
CUDA predictions. --lanes W is the lanes each rank opened with
UCC_TL_GORING_LANES=auto (the host's cores shared among its ranks): a host call
then takes as many as pay for it, and is predicted as its largest lane part.
--crossmem T is the threads each rank runs cross-memory reads on with
UCC_TL_GORING_CROSSMEM=auto: the host allreduce and allgather sizes where they
were measured faster are claimed by that measured rule (shown as "measured",
not predicted). --gpu-model NAME (the GPUs' name as the driver gives it,
"NVIDIA H200") adds the claims measured on such a machine against UCC's GPU
layers (docs/ucc.md: score 41 where goring beat the layer UCC would otherwise
run, of those in --layers), after a '|' as the team layer applies them;
--claims FILE (goring tune ucc, UCC_TL_GORING_CLAIMS) decides them instead
of the shipped tables where it fits the team. The
team layer's own options (UCC_TL_GORING_ALG_*) are not read: the defaults are
predicted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runModelScores(cmd.OutOrStdout(), f) },
	}
	fl := c.Flags()
	fl.IntVar(&f.np, "np", 0, "ranks of the team, 2 to 16")
	fl.IntVar(&f.gpus, "gpus", 0, "GPUs of the host (0: host memory only)")
	fl.StringVar(&f.cpathMax, "cpath-max", "64K", "the team layer's UCC_TL_GORING_CPATH_MAX (0: every call in Go)")
	fl.StringVar(&f.calib, "calibration", "", "goring.calibration/v1 file of this machine (a rank per GPU)")
	fl.IntVar(&f.lanes, "lanes", 1, "lanes each rank opened with UCC_TL_GORING_LANES=auto (host calls)")
	fl.IntVar(&f.crossmem, "crossmem", 0, "threads each rank has with UCC_TL_GORING_CROSSMEM=auto (0: off)")
	fl.StringVar(&f.gpuModel, "gpu-model", "", "the GPUs' name (\"NVIDIA H200\"): add the claims measured on such GPUs (needs --gpus)")
	fl.StringVar(&f.layers, "layers", "ucp,cuda,nccl", "UCC's team layers in the context, for --gpu-model's claims")
	fl.StringVar(&f.claims, "claims", "", "goring.claims/v1 file (goring tune ucc): this machine's measured table, as UCC_TL_GORING_CLAIMS")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON document")
	return c
}

func runModelScores(w io.Writer, f modelScoresFlags) error {
	if f.np < 2 || f.np > tune.MaxRanks {
		return fmt.Errorf("--np %d: want 2 to %d ranks (the model's teams)", f.np, tune.MaxRanks)
	}
	if f.gpus < 0 {
		return fmt.Errorf("--gpus %d: want 0 (host memory only) or more", f.gpus)
	}
	if f.gpus > 1 && f.gpus < f.np {
		return fmt.Errorf("--gpus %d with --np %d: the model has ranks share one GPU (--gpus 1) or a GPU each (--gpus %d or more)", f.gpus, f.np, f.np)
	}
	if f.lanes < 1 || f.lanes > coll.MaxLanes {
		return fmt.Errorf("--lanes %d: want 1 to %d", f.lanes, coll.MaxLanes)
	}
	if f.crossmem < 0 || f.crossmem > tune.CrossMaxThreads {
		return fmt.Errorf("--crossmem %d: want 0 (off) to %d threads, what UCC_TL_GORING_CROSSMEM=auto gives a rank", f.crossmem, tune.CrossMaxThreads)
	}
	cmax, err := units.ParseBytes(f.cpathMax)
	if err != nil {
		return fmt.Errorf("--cpath-max: %w", err)
	}
	s := tune.Shape{Size: f.np, OneHost: true, GPUs: f.gpus, CMax: cmax, Lanes: f.lanes, Cross: f.crossmem, Leader: direct.Model{}}
	if f.calib != "" {
		if f.gpus < 2 {
			return fmt.Errorf("--calibration needs --gpus: the file's machine, a rank per GPU")
		}
		cal, err := loadCalibration(f.calib)
		if err != nil {
			return err
		}
		s.Cal, s.CalName, s.GPUModel = cal, f.calib, cal.GPUModel
	}
	str, points, summary := tune.Claims(s, choose.OneHost(f.np, f.gpus).Claim)
	if f.claims != "" && f.gpuModel == "" {
		return fmt.Errorf("--claims needs --gpu-model: the file fits teams on GPUs of its name")
	}
	if f.gpuModel != "" {
		if f.gpus == 0 {
			return fmt.Errorf("--gpu-model needs --gpus: the claims are of CUDA calls")
		}
		var ok bool
		var own *tune.ClaimsFile
		if f.claims != "" {
			if own, err = loadClaimsFile(f.claims); err != nil {
				return fmt.Errorf("--claims: %w", err)
			}
		}
		if str, summary, ok = tune.WithNodeClaims(str, summary, f.gpuModel, f.np, f.gpus == 1, strings.Split(f.layers, ","), own, f.claims); !ok {
			summary += "; nothing measured on " + f.gpuModel + " for this team"
		}
	}
	if f.asJSON {
		return writeScoresJSON(w, str, summary, points)
	}
	return writeScoresTable(w, str, summary, points)
}

// scoresOrder lists the predictions in a stable order: host then cuda,
// collectives as the team layer scores them.
func scoresOrder(points map[string][]tune.Point) []string {
	var keys []string
	for _, mem := range []string{"host", "cuda"} {
		for _, c := range tune.ScoredColls {
			if _, ok := points[mem+" "+string(c)]; ok {
				keys = append(keys, mem+" "+string(c))
			}
		}
	}
	return keys
}

func writeScoresTable(w io.Writer, str, summary string, points map[string][]tune.Point) error {
	for _, k := range scoresOrder(points) {
		unit := ""
		if strings.HasSuffix(k, " "+string(coll.Allgather)) {
			unit = " (bytes per rank)"
		}
		fmt.Fprintf(w, "# %s%s\n", k, unit)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "bytes\tgoring\tus\ttl/ucp\tus\ttl/ucp / goring\tclaimed\t")
		for _, p := range points[k] {
			if p.Why != "" {
				fmt.Fprintf(tw, "%s\t%s\t-\t%s\t-\t-\tno: %s\t\n", units.FormatBytes(p.Bytes), p.GoringAlg, p.UCPAlg, p.Why)
				continue
			}
			if p.Measured {
				fmt.Fprintf(tw, "%s\t%s\tmeasured\t%s\t%.1f\t-\tyes\t\n", units.FormatBytes(p.Bytes), p.GoringAlg, p.UCPAlg, p.UCPUS)
				continue
			}
			claimed := "no"
			if p.Claimed {
				claimed = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t%.1f\t%.2f\t%s\t\n", units.FormatBytes(p.Bytes), p.GoringAlg, p.GoringUS, p.UCPAlg, p.UCPUS, p.UCPUS/p.GoringUS, claimed)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "goring's model %s\n", summary)
	if str == "" {
		str = "(none)"
	}
	_, err := fmt.Fprintf(w, "score string: %s\n", str)
	return err
}

// scorePoint is one row of the JSON document.
type scorePoint struct {
	Bytes     int64   `json:"bytes"`
	GoringAlg string  `json:"goring_alg"`
	GoringUS  float64 `json:"goring_us"`
	UCPAlg    string  `json:"ucp_alg"`
	UCPUS     float64 `json:"ucp_us"`
	Claimed   bool    `json:"claimed"`
	Measured  bool    `json:"measured,omitempty"`
	Why       string  `json:"why,omitempty"`
}

func writeScoresJSON(w io.Writer, str, summary string, points map[string][]tune.Point) error {
	doc := struct {
		Scores  string                  `json:"scores"`
		Summary string                  `json:"summary"`
		Points  map[string][]scorePoint `json:"points"`
	}{Scores: str, Summary: summary, Points: map[string][]scorePoint{}}
	for k, pts := range points {
		rows := make([]scorePoint, len(pts))
		for i, p := range pts {
			rows[i] = scorePoint{p.Bytes, p.GoringAlg, p.GoringUS, p.UCPAlg, p.UCPUS, p.Claimed, p.Measured, p.Why}
		}
		doc.Points[strings.ReplaceAll(k, " ", "/")] = rows
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
