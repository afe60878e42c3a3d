package model

import "math"

// Load is what else moves between the GPUs of a node while one transfer
// runs: the step of a collective it belongs to (sched.AnnotateLoads
// counts it from the program). The zero value and {Out: 1} are an idle
// pair, the case the Multi-path model and a calibration describe.
type Load struct {
	// Out is the transfers the source GPU pushes at once, this one
	// included; In the transfers peers push into the source GPU meanwhile.
	Out, In int
	// Senders is the GPUs of the node pushing at once, the source included.
	Senders int
}

// Idle reports whether l is an idle pair's load.
func (l Load) Idle() bool { return max(l.Out, 1) == 1 && l.In == 0 && max(l.Senders, 1) == 1 }

// LoadedPaths returns the paths of one pair as one transfer of a step with
// load l can use them: a fair share of every resource the step's other
// transfers use too, and the contention of the direct copies next to it
// (docs/model.md section 8.6 derives the rule and says what is measured):
//
//   - the direct path's bandwidth divided by Out: a calibrated direct rate
//     is the source GPU's copy-engine rate (390 GB/s on an 18-link NVLink
//     whose line rate is 477), which every push the GPU issues shares;
//   - a staged path's bandwidths (both hops) divided by Out x Senders: the
//     engine issues both hops on the source GPU, so its host link carries
//     Out staged shares, and the host memory (or staging GPU) is shared by
//     the staged shares of every GPU pushing at the step;
//   - the contention measured for one direct copy next to the staged path
//     compounds over the Out + In direct copies that move through the
//     source GPU's memory and engines at the step: each slowdown s becomes
//     1 - (1 - s)^(Out+In).
//
// Startups do not change. The idle load returns a copy of paths unchanged.
func LoadedPaths(paths []Path, l Load) []Path {
	out := append([]Path(nil), paths...)
	if l.Idle() {
		return out
	}
	o, s := float64(max(l.Out, 1)), float64(max(l.Senders, 1))
	copies := float64(max(l.Out, 1) + max(l.In, 0))
	for i := range out {
		p := &out[i]
		if !p.Staged {
			p.Beta1GBps /= o
			continue
		}
		p.Beta1GBps /= o * s
		p.Beta2GBps /= o * s
		p.Contention = Contention{
			DirectSlowdown: compound(p.Contention.DirectSlowdown, copies),
			StagedSlowdown: compound(p.Contention.StagedSlowdown, copies),
		}
	}
	return out
}

// compound is a slowdown s suffered n times over: 1 - (1-s)^n.
func compound(s, n float64) float64 {
	if s <= 0 {
		return 0
	}
	return 1 - math.Pow(1-s, n)
}
