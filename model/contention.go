package model

import "math"

// Contention between the paths of one transfer.
//
// The Multi-path model gives every path its own bandwidth. On the 2xH200
// machine they are not independent (docs/gpu.md, "Reference figures"): with
// 10% of the bytes on the pipelined host path the transfer is 9% slower
// than the direct copy alone, where the independent model predicts 11%
// faster. The paths share the source GPU's copy engines, its memory and
// the fabric behind them.
//
// The model therefore gets one term per staged path, measured against the
// direct path of the same pair: while both carry bytes, the direct path
// runs at (1 - DirectSlowdown) of its bandwidth and the staged path at
// (1 - StagedSlowdown) of its own; a path running alone has its full
// bandwidth. docs/model.md ("Contention between paths") derives what
// follows from it:
//
//   - at the split the solvers look for, every used path finishes at the
//     same time, so all of them run contended for the whole transfer and
//     the equal-finish equations (eq. 24) hold with the contended
//     bandwidths: the solvers solve each set of paths with contendedPaths
//     of that set and need nothing else;
//   - that split is the best one as long as splitting pays at all; where
//     it does not, the solvers' fallback to the direct path alone applies;
//   - a split whose paths do not finish together has a contended phase and
//     a solo phase: OverlapTimeUS computes it, and the fit
//     (contention_fit.go) compares it with measured times.
//
// Several staged paths running at once each take their share of the
// direct path's bandwidth (the factors multiply); staged paths are assumed
// not to slow each other, since nothing measures that yet.
//
// One slowdown, two parametrisations. This file is the one definition of
// how contention slows a path; goring writes it two ways:
//
//   - as the fraction of bandwidth lost, s in [0, 1): the path runs at
//     rate*(1-s) (SlowedRate). Contention, the calibration file, the
//     solvers and LoadedPaths use it: lost fractions of several causes
//     compose by multiplying what each keeps;
//   - as gamma >= 0, the extra time per byte: the path runs at
//     rate/(1+gamma) (GammaSlowedRate). GammaContention, mpath.Simulate and
//     goring bench p2p's fitted gamma use it: a measured time gives gamma
//     directly (T - alpha = bytes*(1+gamma)/beta).
//
// They are the same quantity: s = gamma/(1+gamma), gamma = s/(1-s)
// (SlowdownOfGamma, GammaOfSlowdown), so rate*(1-s) = rate/(1+gamma). What
// differs between the users is how long the slowdown is taken to last
// (while the other path moves bytes here and in mpath.Simulate; the
// direct copy's whole run in bench p2p's fit) and so how it is fitted
// (FitContention here; calib.FitGamma for bench p2p), not what it is.

// SlowedRate is rate under a slowdown s given as the fraction of bandwidth
// lost: rate*(1-s).
func SlowedRate(rate, s float64) float64 { return rate * (1 - s) }

// GammaSlowedRate is rate under the same slowdown given as gamma (see
// above): rate/(1+gamma), equal to SlowedRate(rate, SlowdownOfGamma(gamma))
// up to rounding.
func GammaSlowedRate(rate, gamma float64) float64 { return rate / (1 + gamma) }

// GammaOfSlowdown is the gamma of a lost fraction s in [0, 1): s/(1-s).
func GammaOfSlowdown(s float64) float64 { return s / (1 - s) }

// SlowdownOfGamma is the lost fraction of a gamma >= 0: gamma/(1+gamma).
func SlowdownOfGamma(gamma float64) float64 { return gamma / (1 + gamma) }

// Contention is how a staged path and the direct path of the same GPU pair
// slow each other down while both move bytes. The zero value is no effect.
type Contention struct {
	// DirectSlowdown is the fraction of the direct path's bandwidth lost
	// while the staged path runs, in [0, 1).
	DirectSlowdown float64
	// StagedSlowdown is the fraction of the staged path's own bandwidth
	// (both hops) lost while the direct path runs, in [0, 1).
	StagedSlowdown float64
}

func (c Contention) valid() bool { return inUnit(c.DirectSlowdown) && inUnit(c.StagedSlowdown) }

// Gamma is c with each slowdown as its gamma (GammaOfSlowdown).
func (c Contention) Gamma() GammaContention {
	return GammaContention{DirectGamma: GammaOfSlowdown(c.DirectSlowdown), StagedGamma: GammaOfSlowdown(c.StagedSlowdown)}
}

// GammaContention is Contention with each slowdown as its gamma (see "One
// slowdown, two parametrisations" above): while the other side moves
// bytes, the direct path moves at beta/(1+DirectGamma) and a staged hop at
// its beta/(1+StagedGamma). The zero value is no effect.
type GammaContention struct {
	DirectGamma float64
	StagedGamma float64
}

// Slowdowns is g with each gamma as its lost fraction (SlowdownOfGamma).
func (g GammaContention) Slowdowns() Contention {
	return Contention{DirectSlowdown: SlowdownOfGamma(g.DirectGamma), StagedSlowdown: SlowdownOfGamma(g.StagedGamma)}
}

// inUnit reports whether x is in [0, 1).
func inUnit(x float64) bool { return x >= 0 && x < 1 }

// contendedPaths returns the paths as they run when the paths marked in
// used run together: when the direct path is among them, its bandwidth is
// scaled by (1 - DirectSlowdown) of every used staged path, and every used
// staged path's bandwidths by its (1 - StagedSlowdown). Paths not in used
// are unchanged. When nothing changes (no direct path, or no contention)
// it returns paths itself, so that the contention-free model costs no
// copy; otherwise it writes the result into buf, reusing its capacity (buf
// must not share memory with paths). Callers only read the result.
func contendedPaths(paths []Path, used []bool, buf []Path) []Path {
	d := -1
	for i := range paths {
		if used[i] && paths[i].Family() == PathDirect {
			d = i
			break
		}
	}
	if d < 0 {
		return paths
	}
	changes := false
	for i := range paths {
		changes = changes || (used[i] && paths[i].Staged && paths[i].Contention != Contention{})
	}
	if !changes {
		return paths
	}
	out := append(buf[:0], paths...)
	keep := 1.0
	for i := range paths {
		if i == d || !used[i] || !paths[i].Staged {
			continue
		}
		c := paths[i].Contention
		keep = SlowedRate(keep, c.DirectSlowdown)
		out[i].Beta1GBps = SlowedRate(out[i].Beta1GBps, c.StagedSlowdown)
		out[i].Beta2GBps = SlowedRate(out[i].Beta2GBps, c.StagedSlowdown)
	}
	out[d].Beta1GBps *= keep
	return out
}

// OverlapTimeUS predicts when a split finishes when its paths contend.
// Path i carries bytes[i] (0: unused) in chunks[i] chunks; the used paths
// are launched in slice order with the solvers' launch offsets. While a
// set R of paths runs, path i gets through 1/T_i(R) of its transfer per
// microsecond, T_i(R) being its time (Path.TimeUS) with the bandwidths it
// has in R (contendedPaths); when a path finishes, the others go on at the
// rates of the smaller set. Without contention this is the latest finish
// of the paths; for a split whose paths finish together it is the solvers'
// prediction (a path launched late runs alone for a few microseconds
// first, which only makes it earlier).
//
// Scaling the whole of T_i, startups included, by the share of it done is
// exact for the bandwidth terms and an approximation for the startups,
// which are microseconds against the milliseconds where contention
// matters.
func OverlapTimeUS(paths []Path, bytes []float64, chunks []int) float64 {
	p := len(paths)
	used := make([]bool, p)
	running := make([]bool, p)
	off := make([]float64, p)
	done := make([]float64, p) // fraction of each path's transfer done
	rate := make([]float64, p)
	left := 0
	for i := range paths {
		used[i] = bytes[i] > 0
		if used[i] {
			left++
		}
	}
	launchOffsetsUS(paths, used, off)
	buf := make([]Path, 0, p)
	t, end := 0.0, 0.0
	for left > 0 {
		next := math.Inf(1) // the next launch
		for i := range paths {
			if !used[i] || running[i] || done[i] >= 1 {
				continue
			}
			if off[i] <= t {
				running[i] = true
			} else {
				next = math.Min(next, off[i])
			}
		}
		eff := contendedPaths(paths, running, buf)
		dt := next - t
		for i := range paths {
			if running[i] {
				rate[i] = 1 / eff[i].TimeUS(bytes[i], chunks[i])
				dt = math.Min(dt, (1-done[i])/rate[i])
			}
		}
		if math.IsInf(dt, 1) { // nothing runs and nothing is to start
			break
		}
		t += dt
		for i := range paths {
			if !running[i] {
				continue
			}
			done[i] += rate[i] * dt
			if done[i] >= 1-1e-12 {
				done[i], running[i] = 1, false
				left--
				end = t
			}
		}
	}
	return end
}
