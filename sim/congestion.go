package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// Congestion classes of Parallel Rings Table I.
const (
	ClassFree      = 'F' // ran at the rate it would have had alone
	ClassIncast    = 'I' // slowed on a link it shared with a transfer into the same GPU
	ClassSerial    = 'S' // shared its sender's bus or copy engine with another of the sender's transfers
	ClassDuplicate = 'D' // not slowed, but carries a block another transfer of its step also carries over the same socket link
	ClassOther     = 'C' // slowed by a transfer with another source and destination (no class in the paper)
)

// TransferClass is one transfer of a traced run with its congestion class.
type TransferClass struct {
	Src, Dst int
	// Step is the transfer's algorithmic step, from 1 (see BlockSteps).
	Step int
	// Blocks are the allgather blocks the transfer carries (block b is the
	// one that lands at offset b*Plan.Bytes of dst): for the Ibcast trees
	// of Table I, the tree's root.
	Blocks []int64
	Class  byte
}

// carried is the part of one allgather block a transfer carries: the block
// and the dst offset where the part starts (the block's start unless the
// block travels in pieces).
type carried struct {
	block, off int64
}

// transferParts returns the block parts each traced transfer carries: a
// send from src carries (part of) the sender's own block, a send from dst
// the blocks its byte range covers. Block b lands at offset b*Plan.Bytes
// of dst.
func transferParts(plan *sched.Plan, ts []Transfer) [][]carried {
	out := make([][]carried, len(ts))
	for i, x := range ts {
		st := &plan.Ranks[x.Src].Steps[x.SendStep]
		switch {
		case plan.Bytes == 0:
			out[i] = []carried{{int64(x.Src), 0}}
		case st.SrcBuf == sched.BufSrc:
			out[i] = []carried{{int64(x.Src), int64(x.Src)*plan.Bytes + st.SrcOff}}
		default:
			for b := st.SrcOff / plan.Bytes; b*plan.Bytes < st.SrcOff+st.Len; b++ {
				out[i] = append(out[i], carried{b, max(b*plan.Bytes, st.SrcOff)})
			}
			if len(out[i]) == 0 { // an empty transfer
				out[i] = []carried{{st.SrcOff / plan.Bytes, st.SrcOff}}
			}
		}
	}
	return out
}

// BlockSteps numbers the transfers of a traced allgather run by
// algorithmic step, the columns of Parallel Rings Table I. An allgather is one
// broadcast per block (Table I's Ibcast algorithms run one tree per root
// GPU at once), and a step is a level of that broadcast: a GPU that holds
// block b since step a (a = 0 for its own block) sends b for the k-th time
// in step a+k, counting its sends of b in program order. A transfer that
// carries several blocks (recursive doubling's second step) is in the
// latest of their steps. Where blocks travel in pieces, each piece is
// counted on its own.
//
// This reads the paper's columns for every algorithm of the table alike:
// the k-th of Linear's and K-nomial's sends of a root's block is step k (a
// root posts them together; the table lists them in turn), a binomial
// tree's edge is in the step of its level, and recursive doubling's and the
// congestion-aware schedule's phases follow from what their transfers
// forward. It follows the plan's data flow; timing only tells whether a
// block had arrived when a GPU sent it. The
// sender's k-th send overall would mix the four concurrent trees of BTDD
// and BTDDH; dependency depth (sched.Levels) would put all of Linear's
// sends, posted together, in one step.
//
// ts must be in the order the simulator records transfers (rendezvous
// time). A GPU holds a block from the end of the first transfer that
// brings it; a block it sends before that (or never receives) counts as
// held from the start.
func BlockSteps(plan *sched.Plan, ts []Transfer) []int {
	return blockSteps(ts, transferParts(plan, ts))
}

func blockSteps(ts []Transfer, parts [][]carried) []int {
	type key struct {
		rank int
		part carried
	}
	sends := map[key][]int{} // program-order send steps of a part by a rank
	for i, x := range ts {
		for _, c := range parts[i] {
			k := key{x.Src, c}
			sends[k] = append(sends[k], x.SendStep)
		}
	}
	for _, s := range sends {
		slices.Sort(s)
	}
	held := map[key]int{} // step after which a rank holds a part
	steps := make([]int, len(ts))
	arrive := func(i int) {
		for _, c := range parts[i] {
			k := key{ts[i].Dst, c}
			if h, ok := held[k]; !ok || steps[i] < h {
				held[k] = steps[i]
			}
		}
	}
	// A part is held from the end of the transfer that brings it: apply
	// arrivals in end order before each rendezvous at or after them.
	byEnd := make([]int, len(ts))
	for i := range byEnd {
		byEnd[i] = i
	}
	sort.SliceStable(byEnd, func(a, b int) bool { return ts[byEnd[a]].EndUS < ts[byEnd[b]].EndUS })
	next := 0
	for i, x := range ts {
		for next < len(byEnd) && byEnd[next] < i && ts[byEnd[next]].EndUS <= x.StartUS {
			arrive(byEnd[next])
			next++
		}
		for _, c := range parts[i] {
			k := key{x.Src, c}
			nth, _ := slices.BinarySearch(sends[k], x.SendStep)
			steps[i] = max(steps[i], held[k]+nth+1)
		}
	}
	return steps
}

// ClassifyTransfers labels every transfer of an allgather run made with
// Options.Trace, from the simulator's link accounting and the steps of
// BlockSteps. A transfer is slowed when its mean rate while moving bytes is
// below SoloGBps (its rate alone). In this order:
//
//   - S (serialised), when it was slowed on a link it shared with another
//     send of the same GPU in the same step, or, with
//     Options.CopyEngineSerial, when it waited for its GPU's copy engine
//     while a same-step send of that GPU held it, or held it while one
//     waited. Same-step sharing comes first: where a transfer shares its
//     sender's bus with a same-step send and its receiver's with another
//     sender, Parallel Rings Table I marks S (BTDD's 0→2 and 1→3 and BTDDH's
//     0→1 in step 2);
//   - I (incast), when it was slowed on a link it shared with a transfer
//     into the same GPU, whatever that transfer's step (the receiver does
//     not choose when its senders send);
//   - S, when it was slowed on a link it shared with a send of the same GPU
//     of another step (Linear's concurrent sends, which the paper says
//     serialise; where they also meet incast the table marks I, hence the
//     order);
//   - C, when it was slowed by anything else (no class in the paper);
//   - D (duplicate), when it was not slowed but a block it carries crosses
//     the same directed socket link (UPI) in another transfer of the same
//     step (recursive doubling's second step);
//   - F (congestion-free) otherwise.
//
// A send that queued on the copy engine behind a send of an earlier step
// is in no class of its own: that is the order the algorithm asked for.
//
// The result is sorted by step, then by the first block carried (for
// Table I's trees, the root), the block's owner first, then by sender and
// program order: the order of the paper's rows.
func ClassifyTransfers(plan *sched.Plan, res *Result) ([]TransferClass, error) {
	if plan.Collective != coll.Allgather {
		return nil, fmt.Errorf("classify: blocks are defined for allgather, not %s", plan.Collective)
	}
	if res.Transfers == nil && len(plan.Ranks) > 1 {
		return nil, fmt.Errorf("classify: the run was not traced (Options.Trace)")
	}
	ts := res.Transfers
	parts := transferParts(plan, ts)
	steps := blockSteps(ts, parts)
	blocks := make([][]int64, len(ts))
	for i, ps := range parts {
		for _, c := range ps {
			if n := len(blocks[i]); n == 0 || blocks[i][n-1] != c.block {
				blocks[i] = append(blocks[i], c.block)
			}
		}
	}
	// How many transfers carry a block over a directed socket link in a
	// step.
	type crossing struct {
		link  string
		step  int
		block int64
	}
	cross := map[crossing]int{}
	bySender := map[int][]int{}
	for i, x := range ts {
		bySender[x.Src] = append(bySender[x.Src], i)
		for _, l := range x.Links {
			if !strings.Contains(l, " upi ") {
				continue
			}
			for _, b := range blocks[i] {
				cross[crossing{l, steps[i], b}]++
			}
		}
	}
	out := make([]TransferClass, len(ts))
	for i, x := range ts {
		moving := x.EndUS - x.ActiveUS
		slowed := moving > 0 && float64(x.Bytes)/(moving*1e3) < x.SoloGBps*(1-1e-6)
		var c byte
		switch {
		case sharedCopyEngine(ts, steps, bySender[x.Src], i) || slowed && sharedSend(ts, steps, i, true):
			c = ClassSerial
		case slowed && sharedRecv(ts, i):
			c = ClassIncast
		case slowed && sharedSend(ts, steps, i, false):
			c = ClassSerial
		case slowed:
			c = ClassOther
		default:
			c = ClassFree
		dup:
			for _, l := range x.Links {
				for _, b := range blocks[i] {
					if cross[crossing{l, steps[i], b}] > 1 {
						c = ClassDuplicate
						break dup
					}
				}
			}
		}
		out[i] = TransferClass{Src: x.Src, Dst: x.Dst, Step: steps[i], Blocks: blocks[i], Class: c}
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := &out[order[a]], &out[order[b]]
		if x.Step != y.Step {
			return x.Step < y.Step
		}
		if x.Blocks[0] != y.Blocks[0] {
			return x.Blocks[0] < y.Blocks[0]
		}
		if xo, yo := x.Blocks[0] == int64(x.Src), y.Blocks[0] == int64(y.Src); xo != yo {
			return xo
		}
		if x.Src != y.Src {
			return x.Src < y.Src
		}
		return ts[order[a]].SendStep < ts[order[b]].SendStep
	})
	sorted := make([]TransferClass, len(out))
	for i, j := range order {
		sorted[i] = out[j]
	}
	return sorted, nil
}

// sharedSend reports whether transfer i shared a link, while moving, with
// another send of the same GPU: of the same step (sameStep true) or of any
// step.
func sharedSend(ts []Transfer, steps []int, i int, sameStep bool) bool {
	x := &ts[i]
	for _, o := range x.Shared {
		if ts[o.Other].Src == x.Src && (!sameStep || steps[o.Other] == steps[i]) {
			return true
		}
	}
	return false
}

// sharedRecv reports whether transfer i shared a link, while moving, with
// a transfer into the same GPU.
func sharedRecv(ts []Transfer, i int) bool {
	x := &ts[i]
	for _, o := range x.Shared {
		if ts[o.Other].Dst == x.Dst {
			return true
		}
	}
	return false
}

// sharedCopyEngine reports whether transfer i waited for its GPU's copy
// engine (Options.CopyEngineSerial) while a same-step send of that GPU was
// moving, or moved while such a send waited. sends are the indices of the
// sender's transfers.
func sharedCopyEngine(ts []Transfer, steps []int, sends []int, i int) bool {
	x := &ts[i]
	for _, j := range sends {
		y := &ts[j]
		if j == i || steps[j] != steps[i] {
			continue
		}
		if x.QueuedOnCE && overlap(x.StartUS, x.ActiveUS, y.ActiveUS, y.EndUS) ||
			y.QueuedOnCE && overlap(y.StartUS, y.ActiveUS, x.ActiveUS, x.EndUS) {
			return true
		}
	}
	return false
}

// overlap reports whether [a0, a1) and [b0, b1) intersect with some length.
func overlap(a0, a1, b0, b1 float64) bool {
	const eps = 1e-9
	return math.Min(a1, b1)-math.Max(a0, b0) > eps
}

// FormatClasses prints classes as Parallel Rings Table I does: a column per
// step, "src -> dst X (blocks)" entries in the order of cs.
func FormatClasses(cs []TransferClass) string {
	steps := 0
	for _, c := range cs {
		steps = max(steps, c.Step)
	}
	cols := make([][]string, steps)
	for _, c := range cs {
		bs := make([]string, len(c.Blocks))
		for i, b := range c.Blocks {
			bs[i] = fmt.Sprint(b)
		}
		cols[c.Step-1] = append(cols[c.Step-1], fmt.Sprintf("%d -> %d %c (%s)", c.Src, c.Dst, c.Class, strings.Join(bs, ",")))
	}
	const width = 17
	var b strings.Builder
	var head strings.Builder
	for i := range steps {
		fmt.Fprintf(&head, "%-*s", width, fmt.Sprintf("Step %d", i+1))
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
			fmt.Fprintf(&line, "%-*s", width, cell)
		}
		if !any {
			break
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}
