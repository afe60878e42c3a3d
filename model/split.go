package model

import (
	"fmt"
	"math"
)

// Share is one path's part of a split transfer.
type Share struct {
	Path  Path
	Theta float64 // Bytes / message; 0 for a path the solver dropped
	Bytes int64
	// Chunks is the number of pieces a staged path pipelines its bytes in
	// (1 for a direct path and an unpipelined staged one, 0 when unused).
	Chunks int
	// StartUS is when the path is launched: the startups of the used paths
	// launched before it (Algorithm 1 line 20).
	StartUS float64
	// PredictedUS is when the path finishes: StartUS plus its own time,
	// with the bandwidth it has while the split's other paths run
	// (Path.Contention).
	PredictedUS float64
}

// Split is the model's answer for one transfer.
type Split struct {
	Bytes        int64
	PredictedUS  float64 // when the last path finishes
	DirectOnlyUS float64 // the direct path alone (0 when the pair has no direct route)
	Paths        []Share // one per candidate path, in launch order
	Exact        bool    // solved by the reference solver
	Cached       bool    // configuration taken from the cache and rescaled
	DirectOnly   bool    // below the threshold, or splitting would not pay
}

// Used counts the paths that carry bytes.
func (s Split) Used() int {
	n := 0
	for _, sh := range s.Paths {
		if sh.Bytes > 0 {
			n++
		}
	}
	return n
}

// launchOffsetsUS fills off[i] with the startups of the used paths before
// path i: the paths are launched one after another in slice order, direct
// first (Algorithm 1 line 20 adds them to Delta_i).
func launchOffsetsUS(paths []Path, used []bool, off []float64) {
	acc := 0.0
	for i := range paths {
		off[i] = 0
		if !used[i] {
			continue
		}
		off[i] = acc
		acc += paths[i].LaunchUS()
	}
}

// remainderIndex is the path that receives the bytes the others' rounded
// shares leave over: the direct path when it is used, else the largest.
func remainderIndex(paths []Path, x []float64) int {
	best := -1
	for i := range paths {
		if x[i] <= 0 {
			continue
		}
		if paths[i].Family() == PathDirect {
			return i
		}
		if best < 0 || x[i] > x[best] {
			best = i
		}
	}
	return best
}

// assemble turns real-valued shares x (bytes, 0 for unused) and chunk counts
// k into a Split: every path but the remainder path gets the whole bytes of
// its share, the remainder path the rest, so byte shares add up to n
// exactly; then launch offsets and finish times are computed for the paths
// that really carry bytes, with the bandwidths they have together
// (contendedPaths).
func assemble(paths []Path, n int64, x []float64, k []int, o Options) Split {
	p := len(paths)
	shares := make([]Share, p)
	var usedBuf [16]bool
	var offBuf [16]float64
	used, off := usedBuf[:0], offBuf[:0]
	if p > len(usedBuf) {
		used, off = make([]bool, 0, p), make([]float64, 0, p)
	}
	used, off = used[:p], off[:p]
	rem := remainderIndex(paths, x)
	left := n
	for i := range paths {
		shares[i].Path = paths[i]
		if i == rem || x[i] <= 0 {
			continue
		}
		b := int64(math.Floor(x[i]))
		if b > left {
			b = left
		}
		shares[i].Bytes = b
		left -= b
	}
	if rem >= 0 {
		shares[rem].Bytes = left
	}
	lim := o.limits()
	for i := range shares {
		b := shares[i].Bytes
		used[i] = b > 0
		switch {
		case b == 0:
		case !paths[i].Staged || o.NoPipeline:
			shares[i].Chunks = 1
		default:
			shares[i].Chunks = roundChunks(float64(k[i]), float64(b), lim)
		}
	}
	launchOffsetsUS(paths, used, off)
	eff := contendedPaths(paths, used, nil)
	s := Split{Bytes: n, Paths: shares}
	for i := range shares {
		if !used[i] {
			continue
		}
		shares[i].Theta = float64(shares[i].Bytes) / float64(n)
		shares[i].StartUS = off[i]
		shares[i].PredictedUS = off[i] + eff[i].TimeUS(float64(shares[i].Bytes), shares[i].Chunks)
		s.PredictedUS = math.Max(s.PredictedUS, shares[i].PredictedUS)
	}
	return s
}

// directOnly is the split that sends everything over paths[d].
func directOnly(paths []Path, d int, n int64) Split {
	s := Split{Bytes: n, Paths: make([]Share, len(paths)), DirectOnly: true}
	for i := range paths {
		s.Paths[i].Path = paths[i]
	}
	t := paths[d].TimeUS(float64(n), 1)
	s.Paths[d] = Share{Path: paths[d], Theta: 1, Bytes: n, Chunks: 1, PredictedUS: t}
	s.PredictedUS, s.DirectOnlyUS = t, t
	return s
}

// directIndex is the position of the direct path in paths, or -1.
func directIndex(paths []Path) int {
	for i := range paths {
		if paths[i].Family() == PathDirect {
			return i
		}
	}
	return -1
}

// Solve splits n bytes over paths (in launch order), by the closed form of
// Multi-path model (Algorithm 1 without its cache) or, with exact, by the reference
// solver. Paths the optimum does not use get no bytes (Theorem 1). When the
// list holds a direct path and the split would not finish before it alone
// does, everything goes to the direct path.
func Solve(paths []Path, n int64, o Options, exact bool) (Split, error) {
	if err := o.validate(); err != nil {
		return Split{}, err
	}
	if n <= 0 {
		return Split{}, fmt.Errorf("message size %d bytes: want at least 1 byte", n)
	}
	if len(paths) == 0 {
		return Split{}, fmt.Errorf("no path to split over")
	}
	for _, p := range paths {
		if !p.valid() {
			return Split{}, fmt.Errorf("path %q: startups must be finite and non-negative and bandwidths positive (%+v)", p.Name, p)
		}
	}
	var s Split
	if exact {
		s = solveExact(paths, n, o)
	} else {
		s = solveClosed(paths, n, o)
	}
	s.Exact = exact
	if d := directIndex(paths); d >= 0 {
		alone := directOnly(paths, d, n)
		if s.PredictedUS >= alone.PredictedUS {
			alone.Exact = exact
			return alone, nil
		}
		s.DirectOnlyUS = alone.PredictedUS
	}
	return s, nil
}
