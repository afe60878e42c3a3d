package main

import (
	"bufio"
	"fmt"
	"html"
	"io"

	"github.com/goring-hpc/goring/sched"
)

// The --svg timeline of `goring plan`: one row per rank, one column per
// dependency round (sched.Levels: a step sits one round after its latest
// dependency, and a send and its recv share a round), one small box per step
// coloured by op and labelled with its peer. Steps of one rank in the same
// round run concurrently and are stacked in the row. Transfers that leave
// the node get an orange outline; with few ranks a thin line joins each send
// to its recv. Node boundaries are darker lines. Hovering a box shows the
// step in full (an SVG <title>).

const (
	svgMaxRanks  = 64  // rows drawn; more are summarised in a note
	svgMaxLevels = 400 // columns drawn
	svgMaxStack  = 6   // boxes stacked per cell before "+n"
)

var opColour = map[sched.StepOp]string{
	sched.OpSend:   "#4e79a7",
	sched.OpRecv:   "#59a14f",
	sched.OpCopy:   "#b07aa1",
	sched.OpReduce: "#e15759",
}

// Layout figures, in SVG user units.
const (
	svgSubH   = 13 // height of one stacked box
	svgLabelW = 92 // the rank labels left of the first round
	svgTop    = 58 // title and legend above the first row
)

// svgLayout places a plan's steps: cells[r][l] holds the step ids of rank
// r in round l, for the ranks and rounds drawn.
type svgLayout struct {
	plan                       *sched.Plan
	partners                   [][]int32
	nr                         int // ranks drawn
	nl                         int // rounds in the plan
	shownL                     int // rounds drawn
	cells                      [][][]int
	stack                      int // boxes stacked in the fullest cell drawn
	cellW, rowH, width, height int
}

// svgPrint writes one piece of the SVG document.
type svgPrint func(format string, args ...any)

// svgPos is the centre of a drawn box, where a send-recv line ends.
type svgPos struct{ x, y int }

func writePlanSVG(out io.Writer, plan *sched.Plan) error {
	l, err := layoutPlanSVG(plan)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	l.header(p)
	l.rows(p)
	l.roundAxis(p)
	where := l.boxes(p)
	l.transferLines(p, where)
	l.truncationNote(p)
	p("</svg>\n")
	return w.Flush()
}

// layoutPlanSVG puts every drawn step in its cell (sched.Levels gives the
// round) and sizes the picture from the fullest cell and the round count.
func layoutPlanSVG(plan *sched.Plan) (*svgLayout, error) {
	levels, err := sched.Levels(plan)
	if err != nil {
		return nil, err
	}
	partners, err := sched.Partners(plan)
	if err != nil {
		return nil, err
	}
	l := &svgLayout{plan: plan, partners: partners, nr: min(len(plan.Ranks), svgMaxRanks), stack: 1}
	for r := 0; r < l.nr; r++ {
		for _, lv := range levels[r] {
			l.nl = max(l.nl, int(lv)+1)
		}
	}
	l.shownL = min(l.nl, svgMaxLevels)
	l.cells = make([][][]int, l.nr)
	for r := 0; r < l.nr; r++ {
		l.cells[r] = make([][]int, l.shownL)
		for id, lv := range levels[r] {
			if int(lv) < l.shownL {
				l.cells[r][lv] = append(l.cells[r][lv], id)
				l.stack = max(l.stack, min(len(l.cells[r][lv]), svgMaxStack))
			}
		}
	}
	l.cellW = 1100 / max(l.shownL, 1)
	l.cellW = max(12, min(l.cellW, 90))
	l.rowH = l.stack*svgSubH + 8
	l.width = max(svgLabelW+l.shownL*l.cellW+20, 820) // room for the legend
	l.height = svgTop + l.nr*l.rowH + 46
	return l, nil
}

// header opens the document: background, title and the legend.
func (l *svgLayout) header(p svgPrint) {
	plan := l.plan
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n", l.width, l.height, l.width, l.height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	title := fmt.Sprintf("%s / %s on %s: %d ranks, %s", plan.Collective, plan.Algorithm, plan.Topology, plan.NRanks, bytesLabel(plan.Bytes))
	p(`<text x="10" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	lx := 10
	for _, op := range []sched.StepOp{sched.OpSend, sched.OpRecv, sched.OpCopy, sched.OpReduce} {
		p(`<rect x="%d" y="30" width="12" height="12" fill="%s"/><text x="%d" y="40" font-size="11">%s</text>`+"\n", lx, opColour[op], lx+16, op)
		lx += 70
	}
	p(`<rect x="%d" y="30" width="12" height="12" fill="white" stroke="#f28e2b" stroke-width="2"/><text x="%d" y="40" font-size="11">inter-node transfer</text>`+"\n", lx, lx+16)
	lx += 140
	p(`<text x="%d" y="40" font-size="11" fill="#555">x: dependency round; &#8594;p send to p, &#8592;p recv from p</text>`+"\n", lx)
}

// rows draws each rank's row: a stripe every other rank, the label, and a
// darker line where a new node begins.
func (l *svgLayout) rows(p svgPrint) {
	for r := 0; r < l.nr; r++ {
		y := svgTop + r*l.rowH
		if r%2 == 1 {
			p(`<rect x="0" y="%d" width="%d" height="%d" fill="#f4f4f4"/>`+"\n", y, l.width, l.rowH)
		}
		rp := &l.plan.Ranks[r]
		p(`<text x="6" y="%d" font-size="11">rank %d</text><text x="56" y="%d" font-size="9" fill="#666">n%d.%d</text>`+"\n",
			y+l.rowH/2+4, r, y+l.rowH/2+4, rp.Node, rp.Local)
		if r > 0 && l.plan.Ranks[r-1].Node != rp.Node {
			p(`<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-width="1.5"/>`+"\n", y, l.width, y)
		}
	}
}

// roundAxis numbers the rounds below the rows (about 20 ticks) with a
// faint grid line per tick.
func (l *svgLayout) roundAxis(p svgPrint) {
	tick := max(1, l.shownL/20)
	axisY := svgTop + l.nr*l.rowH + 14
	for lv := 0; lv < l.shownL; lv += tick {
		x := svgLabelW + lv*l.cellW + l.cellW/2
		p(`<text x="%d" y="%d" font-size="9" text-anchor="middle" fill="#555">%d</text>`+"\n", x, axisY, lv)
		p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd" stroke-width="0.5"/>`+"\n", svgLabelW+lv*l.cellW, svgTop, svgLabelW+lv*l.cellW, svgTop+l.nr*l.rowH)
	}
	p(`<text x="%d" y="%d" font-size="10" fill="#555">round</text>`+"\n", 10, axisY)
}

// boxes draws one box per step (a cell's overflow as "+n") and returns
// where each drawn step's box is, by rank and step id.
func (l *svgLayout) boxes(p svgPrint) []map[int]svgPos {
	plan := l.plan
	where := make([]map[int]svgPos, l.nr)
	for r := 0; r < l.nr; r++ {
		where[r] = map[int]svgPos{}
		for lv := 0; lv < l.shownL; lv++ {
			ids := l.cells[r][lv]
			for k, id := range ids {
				x := svgLabelW + lv*l.cellW + 1
				y := svgTop + r*l.rowH + 4 + k*svgSubH
				if k == svgMaxStack-1 && len(ids) > svgMaxStack {
					p(`<text x="%d" y="%d" font-size="9" fill="#333">+%d</text>`+"\n", x+2, y+9, len(ids)-k)
					break
				}
				s := &plan.Ranks[r].Steps[id]
				where[r][id] = svgPos{x + (l.cellW-2)/2, y + (svgSubH-2)/2}
				stroke := ""
				if (s.Op == sched.OpSend || s.Op == sched.OpRecv) && plan.Ranks[s.Peer].Node != plan.Ranks[r].Node {
					stroke = ` stroke="#f28e2b" stroke-width="2"`
				}
				p(`<rect x="%d" y="%d" width="%d" height="%d" rx="2" fill="%s"%s><title>%s</title></rect>`+"\n",
					x, y, l.cellW-2, svgSubH-2, opColour[s.Op], stroke, html.EscapeString(stepText(plan, r, id)))
				if l.cellW >= 22 {
					p(`<text x="%d" y="%d" font-size="8" fill="white" text-anchor="middle" pointer-events="none">%s</text>`+"\n",
						x+(l.cellW-2)/2, y+8, html.EscapeString(stepLabel(s)))
				}
			}
		}
	}
	return where
}

// transferLines joins each drawn send to its recv with a thin line, when
// there are few enough ranks and transfers for the lines to be read.
func (l *svgLayout) transferLines(p svgPrint, where []map[int]svgPos) {
	transfers := 0
	for r := 0; r < l.nr; r++ {
		for _, s := range l.plan.Ranks[r].Steps {
			if s.Op == sched.OpSend {
				transfers++
			}
		}
	}
	if l.nr > 16 || transfers > 800 {
		return
	}
	for r := 0; r < l.nr; r++ {
		for id, s := range l.plan.Ranks[r].Steps {
			if s.Op != sched.OpSend || int(s.Peer) >= l.nr {
				continue
			}
			a, ok1 := where[r][id]
			b, ok2 := where[s.Peer][int(l.partners[r][id])]
			if ok1 && ok2 {
				p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-opacity="0.3" stroke-width="1"/>`+"\n", a.x, a.y, b.x, b.y)
			}
		}
	}
}

// truncationNote says which ranks and rounds were left out, if any.
func (l *svgLayout) truncationNote(p svgPrint) {
	if l.nr < len(l.plan.Ranks) || l.shownL < l.nl {
		p(`<text x="10" y="%d" font-size="10" fill="#a00">showing ranks 0..%d of %d and rounds 0..%d of %d</text>`+"\n",
			l.height-8, l.nr-1, len(l.plan.Ranks), l.shownL-1, l.nl)
	}
}
