package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/goring-hpc/goring/measure"
)

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
func writeP2P(out io.Writer, f *benchFlags, rep *measure.P2PReport) error {
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
