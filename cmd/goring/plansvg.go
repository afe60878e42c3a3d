package main

import (
	"bufio"
	"fmt"
	"html"
	"io"

	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/units"
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

func writePlanSVG(out io.Writer, plan *sched.Plan) error {
	levels, err := sched.Levels(plan)
	if err != nil {
		return err
	}
	partners, err := sched.Partners(plan)
	if err != nil {
		return err
	}
	nr := min(len(plan.Ranks), svgMaxRanks)
	nl := 0
	for r := 0; r < nr; r++ {
		for _, l := range levels[r] {
			nl = max(nl, int(l)+1)
		}
	}
	shownL := min(nl, svgMaxLevels)
	// cells[r][l] = step ids of rank r in round l
	cells := make([][][]int, nr)
	stack := 1
	for r := 0; r < nr; r++ {
		cells[r] = make([][]int, shownL)
		for id, l := range levels[r] {
			if int(l) < shownL {
				cells[r][l] = append(cells[r][l], id)
				stack = max(stack, min(len(cells[r][l]), svgMaxStack))
			}
		}
	}
	cellW := 1100 / max(shownL, 1)
	cellW = max(12, min(cellW, 90))
	const subH, labelW, top = 13, 92, 58
	rowH := stack*subH + 8
	width := max(labelW+shownL*cellW+20, 820) // room for the legend
	height := top + nr*rowH + 46

	w := bufio.NewWriter(out)
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n", width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	title := fmt.Sprintf("%s / %s on %s: %d ranks, %s", plan.Collective, plan.Algorithm, plan.Topology, plan.NRanks, bytesLabel(plan.Bytes))
	p(`<text x="10" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	// Legend.
	lx := 10
	for _, op := range []sched.StepOp{sched.OpSend, sched.OpRecv, sched.OpCopy, sched.OpReduce} {
		p(`<rect x="%d" y="30" width="12" height="12" fill="%s"/><text x="%d" y="40" font-size="11">%s</text>`+"\n", lx, opColour[op], lx+16, op)
		lx += 70
	}
	p(`<rect x="%d" y="30" width="12" height="12" fill="white" stroke="#f28e2b" stroke-width="2"/><text x="%d" y="40" font-size="11">inter-node transfer</text>`+"\n", lx, lx+16)
	lx += 140
	p(`<text x="%d" y="40" font-size="11" fill="#555">x: dependency round; &#8594;p send to p, &#8592;p recv from p</text>`+"\n", lx)

	// Rows.
	for r := 0; r < nr; r++ {
		y := top + r*rowH
		if r%2 == 1 {
			p(`<rect x="0" y="%d" width="%d" height="%d" fill="#f4f4f4"/>`+"\n", y, width, rowH)
		}
		rp := &plan.Ranks[r]
		p(`<text x="6" y="%d" font-size="11">rank %d</text><text x="56" y="%d" font-size="9" fill="#666">n%d.%d</text>`+"\n",
			y+rowH/2+4, r, y+rowH/2+4, rp.Node, rp.Local)
		if r > 0 && plan.Ranks[r-1].Node != rp.Node {
			p(`<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-width="1.5"/>`+"\n", y, width, y)
		}
	}
	// Round axis.
	tick := max(1, shownL/20)
	axisY := top + nr*rowH + 14
	for l := 0; l < shownL; l += tick {
		x := labelW + l*cellW + cellW/2
		p(`<text x="%d" y="%d" font-size="9" text-anchor="middle" fill="#555">%d</text>`+"\n", x, axisY, l)
		p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd" stroke-width="0.5"/>`+"\n", labelW+l*cellW, top, labelW+l*cellW, top+nr*rowH)
	}
	p(`<text x="%d" y="%d" font-size="10" fill="#555">round</text>`+"\n", 10, axisY)

	// Positions of drawn boxes, for the send-recv lines.
	type pos struct{ x, y int }
	where := make([]map[int]pos, nr)
	for r := 0; r < nr; r++ {
		where[r] = map[int]pos{}
		for l := 0; l < shownL; l++ {
			ids := cells[r][l]
			for k, id := range ids {
				x := labelW + l*cellW + 1
				y := top + r*rowH + 4 + k*subH
				if k == svgMaxStack-1 && len(ids) > svgMaxStack {
					p(`<text x="%d" y="%d" font-size="9" fill="#333">+%d</text>`+"\n", x+2, y+9, len(ids)-k)
					break
				}
				s := &rp(plan, r).Steps[id]
				where[r][id] = pos{x + (cellW-2)/2, y + (subH-2)/2}
				stroke := ""
				if (s.Op == sched.OpSend || s.Op == sched.OpRecv) && plan.Ranks[s.Peer].Node != plan.Ranks[r].Node {
					stroke = ` stroke="#f28e2b" stroke-width="2"`
				}
				p(`<rect x="%d" y="%d" width="%d" height="%d" rx="2" fill="%s"%s><title>%s</title></rect>`+"\n",
					x, y, cellW-2, subH-2, opColour[s.Op], stroke, html.EscapeString(stepText(plan, r, id)))
				if cellW >= 22 {
					p(`<text x="%d" y="%d" font-size="8" fill="white" text-anchor="middle" pointer-events="none">%s</text>`+"\n",
						x+(cellW-2)/2, y+8, html.EscapeString(stepLabel(s)))
				}
			}
		}
	}
	transfers := 0
	for r := 0; r < nr; r++ {
		for _, s := range plan.Ranks[r].Steps {
			if s.Op == sched.OpSend {
				transfers++
			}
		}
	}
	if nr <= 16 && transfers <= 800 {
		for r := 0; r < nr; r++ {
			for id, s := range plan.Ranks[r].Steps {
				if s.Op != sched.OpSend || int(s.Peer) >= nr {
					continue
				}
				a, ok1 := where[r][id]
				b, ok2 := where[s.Peer][int(partners[r][id])]
				if ok1 && ok2 {
					p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-opacity="0.3" stroke-width="1"/>`+"\n", a.x, a.y, b.x, b.y)
				}
			}
		}
	}
	if nr < len(plan.Ranks) || shownL < nl {
		p(`<text x="10" y="%d" font-size="10" fill="#a00">showing ranks 0..%d of %d and rounds 0..%d of %d</text>`+"\n",
			height-8, nr-1, len(plan.Ranks), shownL-1, nl)
	}
	p("</svg>\n")
	return w.Flush()
}

func rp(plan *sched.Plan, r int) *sched.RankProgram { return &plan.Ranks[r] }

func bytesLabel(n int64) string {
	s := units.FormatBytes(n)
	if s == fmt.Sprint(n) {
		return s + " B"
	}
	return s
}

func stepLabel(s *sched.Step) string {
	switch s.Op {
	case sched.OpSend:
		return fmt.Sprintf("→%d", s.Peer)
	case sched.OpRecv:
		return fmt.Sprintf("←%d", s.Peer)
	case sched.OpCopy:
		return "cp"
	default:
		return "+"
	}
}

func stepText(plan *sched.Plan, r, id int) string {
	s := &plan.Ranks[r].Steps[id]
	deps := plan.Ranks[r].Deps(id)
	switch s.Op {
	case sched.OpSend:
		return fmt.Sprintf("rank %d step %d: send %s[%d,+%d) to %d tag %d, deps %v", r, id, s.SrcBuf, s.SrcOff, s.Len, s.Peer, s.Tag, deps)
	case sched.OpRecv:
		return fmt.Sprintf("rank %d step %d: recv %s[%d,+%d) from %d tag %d, deps %v", r, id, s.DstBuf, s.DstOff, s.Len, s.Peer, s.Tag, deps)
	default:
		return fmt.Sprintf("rank %d step %d: %s %s[%d,+%d) into %s[%d], deps %v", r, id, s.Op, s.SrcBuf, s.SrcOff, s.Len, s.DstBuf, s.DstOff, deps)
	}
}
