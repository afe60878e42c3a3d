package main

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/sweep"
	"github.com/goring-hpc/goring/units"
)

// writeLatencyPNG draws predicted latency versus size, one line per
// algorithm, both axes logarithmic.
func writeLatencyPNG(file string, doc *sweep.Doc) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("goring sim %s on %s (%d ranks, predicted)", doc.Collective, doc.Topology, doc.NRanks)
	p.X.Label.Text = "message size (bytes, UCC's meaning)"
	p.Y.Label.Text = "latency (us)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true

	lines := map[string]plotter.XYs{}
	var order []string
	var sizes []float64
	for _, r := range doc.Results {
		if r.PredictedUS == nil {
			continue
		}
		name := r.Algorithm
		if r.Chosen != "" {
			name = "auto"
		}
		if _, ok := lines[name]; !ok {
			order = append(order, name)
		}
		lines[name] = append(lines[name], plotter.XY{X: float64(r.Bytes), Y: *r.PredictedUS})
		sizes = append(sizes, float64(r.Bytes))
	}
	if len(order) == 0 {
		return fmt.Errorf("--png: no algorithm produced a prediction")
	}
	var ticks []plot.Tick
	sort.Float64s(sizes)
	for i, s := range sizes {
		if i > 0 && s == sizes[i-1] {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: s, Label: units.FormatBytes(int64(s))})
	}
	if len(ticks) > 12 { // label every other size when crowded
		for i := range ticks {
			if i%2 == 1 {
				ticks[i].Label = ""
			}
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	for i, name := range order {
		l, s, err := plotter.NewLinePoints(lines[name])
		if err != nil {
			return err
		}
		l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		s.Shape = plotutil.Shape(i)
		p.Add(l, s)
		p.Legend.Add(name, l, s)
	}
	return p.Save(22*vg.Centimeter, 14*vg.Centimeter, file)
}

// maxGanttRanks bounds the rows of a Gantt chart: beyond it the picture is
// unreadable anyway.
const maxGanttRanks = 32

// ganttBar is one step of one rank.
type ganttBar struct {
	row        float64
	start, end float64
	op         sched.StepOp
}

// gantt draws steps as filled boxes, one row per rank.
type gantt struct {
	bars          []ganttBar
	colors        map[sched.StepOp]color.Color
	xmax, rowsMax float64
}

func (g *gantt) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for _, b := range g.bars {
		x0, x1 := tx(b.start), tx(b.end)
		if x1-x0 < 0.5 { // keep instantaneous steps visible
			x1 = x0 + 0.5
		}
		// sends fill the upper half of the row, recvs the lower, local ops all
		lo, hi := b.row-0.4, b.row+0.4
		switch b.op {
		case sched.OpSend:
			lo = b.row
		case sched.OpRecv:
			hi = b.row
		}
		y0, y1 := ty(lo), ty(hi)
		c.FillPolygon(g.colors[b.op], []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
}

func (g *gantt) DataRange() (xmin, xmax, ymin, ymax float64) {
	// 15% of room on the right keeps the legend off the bars.
	return 0, g.xmax * 1.15, -0.6, g.rowsMax + 0.6
}

type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(s.c, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

// writeGanttPNG draws the timeline of one simulated run: a row per rank
// (rank 0 at the top), sends in the upper half, recvs in the lower half,
// copies and reductions across.
func writeGanttPNG(file, title string, plan *sched.Plan, res *sim.Result) error {
	nr := min(plan.NRanks, maxGanttRanks)
	g := &gantt{xmax: math.Max(res.TotalUS, 1e-3), rowsMax: float64(nr - 1), colors: map[sched.StepOp]color.Color{
		sched.OpSend:   color.NRGBA{R: 31, G: 119, B: 180, A: 200},
		sched.OpRecv:   color.NRGBA{R: 255, G: 127, B: 14, A: 200},
		sched.OpCopy:   color.NRGBA{R: 44, G: 160, B: 44, A: 200},
		sched.OpReduce: color.NRGBA{R: 214, G: 39, B: 40, A: 200},
	}}
	for _, st := range res.Steps {
		if st.Rank >= nr {
			continue
		}
		op := plan.Ranks[st.Rank].Steps[st.Step].Op
		g.bars = append(g.bars, ganttBar{row: float64(nr - 1 - st.Rank), start: st.StartUS, end: st.EndUS, op: op})
	}
	p := plot.New()
	p.Title.Text = title
	if plan.NRanks > nr {
		p.Title.Text += fmt.Sprintf(" (first %d of %d ranks)", nr, plan.NRanks)
	}
	p.X.Label.Text = "time (us)"
	p.Y.Label.Text = "rank"
	var ticks []plot.Tick
	step := max(1, nr/16)
	for r := 0; r < nr; r += step {
		ticks = append(ticks, plot.Tick{Value: float64(nr - 1 - r), Label: fmt.Sprint(r)})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(g)
	for _, op := range []sched.StepOp{sched.OpSend, sched.OpRecv, sched.OpCopy, sched.OpReduce} {
		p.Legend.Add(op.String(), swatch{g.colors[op]})
	}
	p.Legend.Top = true
	h := 6 + 0.5*float64(nr)
	return p.Save(26*vg.Centimeter, vg.Length(h)*vg.Centimeter, file)
}
