package tune

import (
	"fmt"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
)

// Margin is how much faster goring must be predicted to claim a size: at
// most this share of tl/ucp's predicted time. Below 1 so that a tie, or a
// difference inside the model's error, stays with UCC's own layer.
const Margin = 0.95

// Chooser names the algorithm goring runs for c on bytes, and the one it
// falls back to where that cannot serve the team ("" for none): the team
// layer's own choice, so the prediction is of what would run.
type Chooser func(c coll.Collective, bytes int64) (alg, fallback string)

// Point is the prediction at one size: each layer's algorithm and time
// (call and messages included), and whether goring claims it.
type Point struct {
	Bytes     int64
	GoringAlg string
	GoringUS  float64
	UCPAlg    string
	UCPUS     float64
	Claimed   bool
	// Measured says goring's side is not predicted but claimed by a
	// measured rule (cross-memory reads: CrossCall); GoringUS is 0 then.
	Measured bool
	// Why, where a layer could not be predicted (no claim then).
	Why string
}

// Sizes are the sizes the ranges are decided at: powers of two from 4 B
// (one float) to 1 GiB per rank; each decides up to the next.
func Sizes() []int64 {
	var s []int64
	for b := int64(4); b <= 1<<30; b *= 2 {
		s = append(s, b)
	}
	return s
}

// Compare predicts both layers at every size of sizes (increasing) for c
// on r, elements of dtypeBytes.
func Compare(r Regime, c coll.Collective, dtypeBytes int, sizes []int64, choose Chooser) ([]Point, error) {
	if err := r.UCP.validate(); err != nil {
		return nil, err
	}
	out := make([]Point, 0, len(sizes))
	for _, b := range sizes {
		p := Point{Bytes: b}
		ucpAlg, err := UCPAlgorithm(c, b, r.Procs())
		if err != nil {
			return nil, err
		}
		p.UCPAlg = ucpAlg
		if p.UCPUS, err = r.predict(r.UCP, c, ucpAlg, b, dtypeBytes); err != nil {
			p.Why = "tl/ucp: " + err.Error()
			out = append(out, p)
			continue
		}
		if r.Cross > 0 && CrossCall(c, r.Procs(), r.Cross, b) {
			p.GoringAlg = fmt.Sprintf("crossmem/T%d", r.Cross)
			p.Measured, p.Claimed = true, true
			out = append(out, p)
			continue
		}
		alg, fallback := choose(c, b)
		p.GoringAlg = alg
		part, lanes := r.lanePart(c, b, dtypeBytes)
		p.GoringUS, err = r.predict(r.goringLayer(b), c, alg, part, dtypeBytes)
		if sched.IsUnsupported(err) && fallback != "" {
			p.GoringAlg = fallback
			p.GoringUS, err = r.predict(r.goringLayer(b), c, fallback, part, dtypeBytes)
		}
		if lanes > 1 {
			p.GoringAlg = fmt.Sprintf("%s/L%d", p.GoringAlg, lanes)
		}
		if err != nil {
			p.Why = "goring: " + err.Error()
			out = append(out, p)
			continue
		}
		p.Claimed = p.GoringUS <= Margin*p.UCPUS
		out = append(out, p)
	}
	return out, nil
}

// lanePart is what goring's prediction of c on bytes runs: the call
// itself on one lane, or its largest lane part where the regime's lanes
// take it on several (CallLanes), with the lane count. The parts run at
// once on cores of their own, so the largest sets the time. That is
// optimistic about how the parts share the host's memory, but CallLanes
// takes lanes only where they were measured to pay (1.3x or more from
// 4 MiB) or to break even (2 MiB), so it does not turn a loss into a
// claim.
func (r Regime) lanePart(c coll.Collective, bytes int64, dtypeBytes int) (int64, int) {
	if r.Lanes < 2 {
		return bytes, 1
	}
	w := CallLanes(c, r.Procs(), r.Lanes, bytes)
	if w < 2 {
		return bytes, 1
	}
	var part int64
	for _, p := range coll.LaneSplit(c, bytes, dtypeBytes, r.Procs(), w) {
		part = max(part, p.Len)
	}
	return part, w
}

// predict is layer l's time for alg on c of bytes: its call cost plus the
// simulated plan with its message cost on every transfer.
func (r Regime) predict(l Layer, c coll.Collective, alg string, bytes int64, dtypeBytes int) (float64, error) {
	if err := l.validate(); err != nil {
		return 0, err
	}
	if r.OneDevice != nil && r.Leader != nil && r.Leader.Runs(alg, c, r.Procs()) {
		t, err := r.OneDevice.predict(r.Leader, c, r.Procs(), bytes)
		return l.CallUS + t, err
	}
	opt := r.Opt
	opt.MessageUS = l.MessageUS
	spec := sched.Spec{Collective: c, Algorithm: alg, Topo: r.Topo, Bytes: bytes, DtypeBytes: dtypeBytes}
	res, _, err := sim.Run(spec, opt)
	if err != nil {
		return 0, err
	}
	return l.CallUS + res.TotalUS, nil
}

// Range is a run of sizes [Lo, Hi) goring claims (Hi 0: no upper end),
// in goring's bytes.
type Range struct{ Lo, Hi int64 }

// Ranges joins the claimed points into ranges: point i decides from its
// size up to the next point's (the first from 0, the last without end).
func Ranges(points []Point) []Range {
	var out []Range
	for i, p := range points {
		if !p.Claimed {
			continue
		}
		lo, hi := p.Bytes, int64(0)
		if i == 0 {
			lo = 0
		}
		if i+1 < len(points) {
			hi = points[i+1].Bytes
		}
		if n := len(out); n > 0 && out[n-1].Hi == lo {
			out[n-1].Hi = hi
			continue
		}
		out = append(out, Range{lo, hi})
	}
	return out
}

// TuneString writes ranges as entries of UCC's score syntax, as
// UCC_TL_<NAME>_TUNE takes them: "coll:mem:lo-hi:score" joined by '#'.
// UCC counts a message as the whole result for allgather (procs times
// goring's bytes) and as goring does for the others.
//
// A Range excludes its Hi, the next decided size, which goring did not
// claim; UCC 1.8 looks a size up with both ends of a range included and
// gives a size where two layers' ranges meet to the higher score, which
// a claim is. So the entry ends one byte below Hi: written as Hi, every
// claimed range would also take the size after it (a power of two, where
// calls land) from the layer that was faster there. A range of one byte
// cannot be written (UCC refuses lo-lo, and lo-(lo+1) takes lo+1 too)
// and is left out: a claim only where goring was found faster.
func TuneString(c coll.Collective, mem string, procs int, ranges []Range, score int) (string, error) {
	if score < 0 {
		return "", fmt.Errorf("tune: score %d: want 0 or more", score)
	}
	scale := int64(1)
	if c == coll.Allgather {
		scale = int64(procs)
	}
	parts := make([]string, 0, len(ranges))
	for _, r := range ranges {
		lo, hi := r.Lo*scale, "inf"
		if r.Hi > 0 {
			last := r.Hi*scale - 1
			if last <= lo {
				continue
			}
			hi = fmt.Sprint(last)
		}
		parts = append(parts, fmt.Sprintf("%s:%s:%d-%s:%d", c, mem, lo, hi, score))
	}
	return strings.Join(parts, "#"), nil
}
