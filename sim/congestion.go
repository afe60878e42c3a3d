package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// Congestion classes of seed 000 Table I.
const (
	ClassFree      = 'F' // ran at the rate it would have had alone
	ClassIncast    = 'I' // slowed on a link it shared with a transfer into the same GPU
	ClassSerial    = 'S' // slowed on a link it shared with a transfer from the same GPU
	ClassDuplicate = 'D' // not slowed, but carries a block that another transfer also carries over the same socket link
	ClassOther     = 'C' // slowed by a transfer with another source and destination (no class in the paper)
)

// TransferClass is one transfer of a traced run with its congestion class.
type TransferClass struct {
	Src, Dst int
	// Step is the transfer's position among its sender's sends, from 1: the
	// "step" of seed 000 Table I, where each rank's k-th send is step k.
	Step  int
	Class byte
}

// ClassifyTransfers labels every transfer of an allgather run made with
// Options.Trace, from the simulator's link accounting alone:
//
//   - a transfer is slowed when its mean rate while moving bytes is below
//     SoloGBps; a slowed transfer is I if a transfer it shared a link with
//     went to the same GPU, else S if one came from the same GPU, else C;
//   - a transfer that was not slowed is D if some block of the allgather it
//     carries (block b sits at offset b*Bytes of dst; src is the sender's
//     own block) crosses the same directed socket link (UPI) in another
//     transfer too, and F otherwise.
//
// The result is sorted by sender, then step.
func ClassifyTransfers(plan *sched.Plan, res *Result) ([]TransferClass, error) {
	if plan.Collective != coll.Allgather {
		return nil, fmt.Errorf("classify: blocks are defined for allgather, not %s", plan.Collective)
	}
	if res.Transfers == nil && len(plan.Ranks) > 1 {
		return nil, fmt.Errorf("classify: the run was not traced (Options.Trace)")
	}
	ts := res.Transfers
	// Blocks crossing each directed socket link: link -> block -> transfers.
	cross := map[string]map[int64][]int{}
	blocks := make([][]int64, len(ts))
	for i, x := range ts {
		st := &plan.Ranks[x.Src].Steps[x.SendStep]
		if st.SrcBuf == sched.BufSrc || plan.Bytes == 0 {
			blocks[i] = []int64{int64(x.Src)}
		} else {
			for b := st.SrcOff / plan.Bytes; b*plan.Bytes < st.SrcOff+st.Len; b++ {
				blocks[i] = append(blocks[i], b)
			}
		}
		for _, l := range x.Links {
			if !strings.Contains(l, " upi ") {
				continue
			}
			if cross[l] == nil {
				cross[l] = map[int64][]int{}
			}
			for _, b := range blocks[i] {
				cross[l][b] = append(cross[l][b], i)
			}
		}
	}
	ordinal := map[int]int{}
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := ts[order[a]], ts[order[b]]
		if x.Src != y.Src {
			return x.Src < y.Src
		}
		return x.SendStep < y.SendStep
	})
	out := make([]TransferClass, 0, len(ts))
	for _, i := range order {
		x := ts[i]
		ordinal[x.Src]++
		c := byte(ClassFree)
		moving := x.EndUS - x.ActiveUS
		if moving > 0 && float64(x.Bytes)/(moving*1e3) < x.SoloGBps*(1-1e-6) {
			c = ClassOther
			for _, o := range x.Shared {
				y := ts[o.Other]
				if y.Dst == x.Dst {
					c = ClassIncast
					break
				}
				if y.Src == x.Src {
					c = ClassSerial
				}
			}
		} else {
		dup:
			for _, l := range x.Links {
				for _, b := range blocks[i] {
					if len(cross[l][b]) > 1 {
						c = ClassDuplicate
						break dup
					}
				}
			}
		}
		out = append(out, TransferClass{Src: x.Src, Dst: x.Dst, Step: ordinal[x.Src], Class: c})
	}
	return out, nil
}

// FormatClasses prints classes as seed 000 Table I does: a column per
// step, "src -> dst X" entries.
func FormatClasses(cs []TransferClass) string {
	steps := 0
	for _, c := range cs {
		steps = max(steps, c.Step)
	}
	cols := make([][]string, steps)
	for _, c := range cs {
		cols[c.Step-1] = append(cols[c.Step-1], fmt.Sprintf("%d -> %d %c", c.Src, c.Dst, c.Class))
	}
	var b strings.Builder
	var head strings.Builder
	for i := range steps {
		fmt.Fprintf(&head, "%-12s", fmt.Sprintf("Step %d", i+1))
	}
	b.WriteString(strings.TrimRight(head.String(), " ") + "\n")
	for row := 0; ; row++ {
		any := false
		var line strings.Builder
		for i := range steps {
			cell := ""
			if row < len(cols[i]) {
				cell, any = cols[i][row], true
			}
			fmt.Fprintf(&line, "%-12s", cell)
		}
		if !any {
			break
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}
