package main

import (
	"fmt"
	"io"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/goring-hpc/goring/bench"
)

// writeBenchPNG draws goring bench's average latency against message size,
// one line per algorithm, on log-log axes, as a PNG (--png). It lives with
// the CLI so that the library runner (package bench) and what imports it
// never pull in the plotting library.
func writeBenchPNG(w io.Writer, title string, rows []bench.Row) error {
	if len(rows) == 0 {
		return fmt.Errorf("no results to plot")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "message size (bytes)"
	p.Y.Label.Text = "average latency (us)"
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	byAlg := map[string]plotter.XYs{}
	var names []string
	for _, r := range rows {
		if r.Bytes <= 0 || r.AvgUS <= 0 {
			continue // a log axis cannot show zero
		}
		if _, ok := byAlg[r.Algorithm]; !ok {
			names = append(names, r.Algorithm)
		}
		byAlg[r.Algorithm] = append(byAlg[r.Algorithm], plotter.XY{X: float64(r.Bytes), Y: r.AvgUS})
	}
	if len(names) == 0 {
		return fmt.Errorf("no positive sizes and latencies to plot")
	}
	sort.Strings(names)
	var args []any
	for _, n := range names {
		pts := byAlg[n]
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		args = append(args, n, pts)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
