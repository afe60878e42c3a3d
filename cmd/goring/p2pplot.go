package main

import (
	"fmt"
	"io"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/goring-hpc/goring/measure"
)

// writeP2PPNG draws goring bench p2p's bandwidth against message size, one
// line per column, in the manner of the Multi-path paper's Figs. 4-6: one
// panel per direction (osu_bw, osu_bibw), window 1, where the model's own
// case (one transfer at a time) is; the model's predicted bandwidth is a
// dashed line of its own. Bandwidth as the table's: bytes delivered per
// second, both directions counted for osu_bibw.
func writeP2PPNG(w io.Writer, rep *measure.P2PReport) error {
	const width, height = 8 * vg.Inch, 5 * vg.Inch
	var panels []*plot.Plot
	for _, bidir := range []bool{false, true} {
		p, err := p2pPanel(rep, bidir)
		if err != nil {
			return err
		}
		if p != nil {
			panels = append(panels, p)
		}
	}
	if len(panels) == 0 {
		return fmt.Errorf("no window-1 rows to plot")
	}
	img := vgimg.New(width, height*vg.Length(len(panels)))
	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(8), PadTop: vg.Points(4), PadBottom: vg.Points(4)}
	canvases := plot.Align(rows, tiles, draw.New(img))
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// p2pPanel is one direction's panel (nil: no rows for it).
func p2pPanel(rep *measure.P2PReport, bidir bool) (*plot.Plot, error) {
	cols := []struct {
		name string
		us   func(r measure.P2PRow) float64
	}{
		{"direct push", func(r measure.P2PRow) float64 { return r.DirectUS }},
		{"UCX cuda_ipc", func(r measure.P2PRow) float64 { return r.UCXUS }},
		{"model split (contention-aware)", func(r measure.P2PRow) float64 { return r.ModelUS }},
		{"contention-free model split", func(r measure.P2PRow) float64 { return r.FreeUS }},
		{"best static split", func(r measure.P2PRow) float64 { return r.BestUS }},
	}
	lines := make([]plotter.XYs, len(cols))
	var predicted plotter.XYs
	for _, r := range rep.Rows {
		if r.Window != 1 || r.Bidir != bidir || r.Bytes <= 0 {
			continue
		}
		for i, c := range cols {
			if us := c.us(r); us > 0 {
				lines[i] = append(lines[i], plotter.XY{X: float64(r.Bytes), Y: gbps(r.Bytes, us, bidir)})
			}
		}
		if !bidir && r.PredictedUS > 0 {
			predicted = append(predicted, plotter.XY{X: float64(r.Bytes), Y: gbps(r.Bytes, r.PredictedUS, false)})
		}
	}
	if len(lines[0]) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = "goring bench p2p, window 1, one way (osu_bw)"
	if bidir {
		p.Title.Text = "goring bench p2p, window 1, both ways (osu_bibw)"
	}
	p.X.Label.Text = "message size (bytes)"
	p.Y.Label.Text = "bandwidth (GB/s)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	var args []any
	for i, c := range cols {
		if len(lines[i]) > 0 {
			args = append(args, c.name, lines[i])
		}
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	if len(predicted) > 0 {
		l, err := plotter.NewLine(predicted)
		if err != nil {
			return nil, err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("model's prediction", l)
	}
	return p, nil
}

// writeP2PPNGFile is --png for bench p2p.
func writeP2PPNGFile(path string, rep *measure.P2PReport) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--png: %w", err)
	}
	if err := writeP2PPNG(f, rep); err != nil {
		f.Close()
		return fmt.Errorf("--png: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--png: %w", err)
	}
	return nil
}
