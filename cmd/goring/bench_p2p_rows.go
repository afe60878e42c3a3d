package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
)

// p2pRow is one size of one (direction, window): microseconds per message
// (rank 0's view; both directions' bytes count for bidirectional GB/s).
type p2pRow struct {
	Bytes         int64   `json:"bytes"`
	Window        int     `json:"window"`
	Bidir         bool    `json:"bidirectional"`
	DirectUS      float64 `json:"direct_us"`
	UCXUS         float64 `json:"ucx_us"`
	ModelUS       float64 `json:"model_us"`
	ModelHostPct  float64 `json:"model_host_pct"`
	ModelChunks   int     `json:"model_chunks"`
	FreeUS        float64 `json:"contention_free_model_us"`
	FreeHostPct   float64 `json:"contention_free_host_pct"`
	BestUS        float64 `json:"best_static_us"`
	BestHostPct   int     `json:"best_static_host_pct"`
	PredictedUS   float64 `json:"predicted_us"`
	PredictionErr float64 `json:"prediction_error_pct"` // (predicted - measured) / measured of the model's split, window 1 one way only
}

// p2pReport is the JSON document of goring bench p2p --json.
type p2pReport struct {
	Schema      string        `json:"schema"`
	Fits        calib.P2PFits `json:"fits"`
	Paths       []model.Path  `json:"paths"`
	MaxSharePct int           `json:"static_search_max_host_pct"`
	Checked     []int64       `json:"contents_checked_bytes"` // odd sizes sent split and compared byte for byte
	Rows        []p2pRow      `json:"rows"`
}

// row measures every column at one size. Both ranks run the same
// sequence; only rank 0's times are kept.
func (r *p2pRun) row(paths []model.Path, o model.Options, gamma float64, n int64, w int, bidir bool) (p2pRow, error) {
	row := p2pRow{Bytes: n, Window: w, Bidir: bidir}
	var err error
	if row.DirectUS, err = r.measure(nil, false, n, w, bidir); err != nil {
		return row, fmt.Errorf("direct: %w", err)
	}
	if row.UCXUS, err = r.measure(nil, true, n, w, bidir); err != nil {
		return row, fmt.Errorf("UCX cuda_ipc: %w", err)
	}
	split, err := calib.ContendedSplit(paths, n, o, gamma)
	if err != nil {
		return row, err
	}
	row.PredictedUS = split.PredictedUS
	if row.ModelUS, row.ModelHostPct, row.ModelChunks, err = r.measureSplit(split, row.DirectUS, w, bidir); err != nil {
		return row, fmt.Errorf("model split: %w", err)
	}
	free, err := model.Solve(paths, n, o, true)
	if err != nil {
		return row, err
	}
	if row.FreeUS, row.FreeHostPct, _, err = r.measureSplit(free, row.DirectUS, w, bidir); err != nil {
		return row, fmt.Errorf("contention-free split: %w", err)
	}
	if w == 1 && !bidir && row.ModelUS > 0 {
		row.PredictionErr = 100 * (row.PredictedUS - row.ModelUS) / row.ModelUS
	}
	row.BestUS, row.BestHostPct = row.DirectUS, 0
	for pct := 1; pct <= calib.P2PMaxShare; pct++ {
		plan, err := mpath.Build(calib.StaticSplit(paths, n, pct, o), r.eng.MaxStage())
		if err != nil {
			return row, err
		}
		us, err := r.measure(plan, false, n, w, bidir)
		if err != nil {
			return row, fmt.Errorf("static split %d%%: %w", pct, err)
		}
		if r.rank == 0 && us < row.BestUS {
			row.BestUS, row.BestHostPct = us, pct
		}
	}
	return row, nil
}

// measureSplit times split (the direct time when it uses one path) and
// returns its host share and chunks.
func (r *p2pRun) measureSplit(split model.Split, directUS float64, w int, bidir bool) (us, hostPct float64, chunks int, err error) {
	if split.DirectOnly || split.Used() < 2 {
		return directUS, 0, 0, nil
	}
	plan, err := mpath.Build(split, r.eng.MaxStage())
	if err != nil {
		return 0, 0, 0, err
	}
	if us, err = r.measure(plan, false, split.Bytes, w, bidir); err != nil {
		return 0, 0, 0, err
	}
	for _, sh := range split.Paths {
		if sh.Path.Staged && sh.Bytes > 0 {
			hostPct, chunks = 100*float64(sh.Bytes)/float64(split.Bytes), sh.Chunks
		}
	}
	return us, hostPct, chunks, nil
}

// gbps is the bandwidth of n bytes per message at us per message.
func gbps(n int64, us float64, bidir bool) float64 {
	if us <= 0 {
		return math.NaN()
	}
	b := float64(n) / us / 1e3
	if bidir {
		b *= 2
	}
	return b
}

// writeP2P prints the report: JSON, or one OSU-style table per
// (direction, window).
func writeP2P(out io.Writer, f *benchFlags, rep *p2pReport) error {
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(out, "# goring bench p2p, 2 processes, cuda memory; fitted paths (alpha us, beta GB/s): direct %.1f/%.0f, host d2h %.1f/%.1f, h2d %.1f/%.1f; direct slowdown under a staged path (gamma) %.3f\n",
		rep.Fits.Direct.AlphaUS, rep.Fits.Direct.BetaGBps, rep.Fits.D2H.AlphaUS, rep.Fits.D2H.BetaGBps, rep.Fits.H2D.AlphaUS, rep.Fits.H2D.BetaGBps, rep.Fits.DirectSlowdown)
	fmt.Fprintf(out, "# contents: split transfers of %v bytes (%d%% on the host path) compared byte for byte: equal\n", rep.Checked, rep.MaxSharePct)
	last := ""
	tw := tabwriter.NewWriter(out, 8, 2, 2, ' ', tabwriter.AlignRight)
	for _, row := range rep.Rows {
		dir := "unidirectional (osu_bw)"
		if row.Bidir {
			dir = "bidirectional (osu_bibw)"
		}
		head := fmt.Sprintf("%s, window %d", dir, row.Window)
		if head != last {
			tw.Flush()
			fmt.Fprintf(out, "\n# %s: bandwidth GB/s per column; model and best static splits give their host share\n", head)
			fmt.Fprintln(tw, "# Size\tDirect\tUCX\tModel\tHost%\tk\tFree model\tHost%\tBest static\tHost%\tPredicted(us)\tMeasured(us)\tError(%)\t")
			last = head
		}
		errCol := "-"
		if row.Window == 1 && !row.Bidir {
			errCol = fmt.Sprintf("%+.1f", row.PredictionErr)
		}
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t%s\t\n", row.Bytes,
			gbps(row.Bytes, row.DirectUS, row.Bidir), gbps(row.Bytes, row.UCXUS, row.Bidir), gbps(row.Bytes, row.ModelUS, row.Bidir),
			row.ModelHostPct, row.ModelChunks, gbps(row.Bytes, row.FreeUS, row.Bidir), row.FreeHostPct,
			gbps(row.Bytes, row.BestUS, row.Bidir), row.BestHostPct, row.PredictedUS, row.ModelUS, errCol)
	}
	return tw.Flush()
}
