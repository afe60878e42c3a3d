package model

import "math"

// solveClosed is Algorithm 1 of Multi-path model (lines 7-31) over a list of paths
// in launch order: closed-form shares, no search.
//
//  1. Each path becomes a line T_i(x) = Delta_i + Omega_i*x (eq. 6, eq. 11's
//     definitions, or the pipelined tangent of eq. 19-22), and Delta_i gets
//     the startups of the paths launched before it (line 20).
//  2. Shares from eq. 24 (lines 24-27). A share <= 0 means the path cannot
//     finish before the others even with no bytes: Theorem 1's condition
//     fails for it, so it is dropped and the rest is solved again.
//  3. For pipelined paths the tangent needs an operating point: first the
//     share the path would get from bandwidths alone (a topology constant,
//     so phi = C/sqrt(n), see docs/model.md), then the share just computed.
//  4. Chunk counts are rounded to integers and, with the chunk counts
//     fixed, each staged path's time is an exact line again; one more
//     eq. 24 solve with those lines makes the paths finish together under
//     the same time function the exact solver uses.
//  5. The byte remainder goes to the direct path (lines 29-30).
//  6. Launch offsets make a path with a positive share still cost the paths
//     launched after it, and a path dropped early may pay once another is
//     gone; the paper's Theorem 1 sees neither. So the result is improved by
//     local search over the set of used paths: starting from the better of
//     step 1-5's answer and the best single path, toggle (drop or add) the
//     one path, or swap a used path for an unused one, whichever most
//     shortens the predicted time, until no move does. Each round is at
//     most p + p^2/4 closed-form solves.
//
// Every set of paths is solved with the bandwidths its paths have while
// they run together (contendedPaths; Path.Contention): an equal-finish
// split keeps them all running to the end, so the lines of eq. 24 are
// those of the contended paths. Without contention nothing changes.
func solveClosed(paths []Path, n int64, o Options) Split {
	p := len(paths)
	sc := newClosedScratch(p)
	bestX, bestK := make([]float64, p), make([]int, p)
	used := make([]bool, p)
	bestT := math.Inf(1)
	try := func() bool {
		t := sc.solveSet(paths, n, o)
		if !(t < bestT*(1-1e-9)) {
			return false
		}
		bestT = t
		copy(bestX, sc.x)
		copy(bestK, sc.k)
		return true
	}
	for i := range sc.active {
		sc.active[i] = true
	}
	try()
	for i := 0; i < p && p > 1; i++ {
		for j := range sc.active {
			sc.active[j] = j == i
		}
		try()
	}
	// Moves from the best set: toggle path i alone (j == -1), or swap used
	// path i for unused path j. Take the best move; stop when none helps.
	for round := 0; round < 2*p && p > 1; round++ {
		for m := range used {
			used[m] = bestX[m] > 0
		}
		roundT := bestT
		var moveX [2]int
		moved := false
		for i := range paths {
			for j := -1; j < p; j++ {
				if j >= 0 && (!used[i] || used[j]) {
					continue
				}
				if j < 0 && used[i] && !dropMayHelp(paths, used, bestX, i) {
					continue
				}
				empty := true
				for m := range sc.active {
					sc.active[m] = used[m] != (m == i || m == j)
					empty = empty && !sc.active[m]
				}
				if empty {
					continue
				}
				if t := sc.solveSet(paths, n, o); t < roundT*(1-1e-9) {
					roundT, moveX, moved = t, [2]int{i, j}, true
				}
			}
		}
		if !moved {
			break
		}
		for m := range sc.active {
			sc.active[m] = used[m] != (m == moveX[0] || m == moveX[1])
		}
		try()
	}
	return assemble(paths, n, bestX, bestK, o)
}

// closedScratch holds the working memory of one closed-form search, so that
// the many solves of the local search allocate nothing.
type closedScratch struct {
	active []bool
	off    []float64
	x0     []float64
	x      []float64
	k      []int
	idx    []int
	lines  []Line
	theta  []float64
	eff    []Path // buffer of contendedPaths, allocated when contention needs it
}

func newClosedScratch(p int) *closedScratch {
	f := make([]float64, 3*p)
	return &closedScratch{
		active: make([]bool, p),
		off:    f[:p:p], x0: f[p : 2*p : 2*p], x: f[2*p:],
		k:     make([]int, p),
		idx:   make([]int, 0, p),
		lines: make([]Line, 0, p),
		theta: make([]float64, 0, p),
	}
}

// solveSet is steps 1-5 over the paths marked in sc.active (which it
// modifies as it drops paths). It leaves the real-valued shares in sc.x
// (0 for unused paths) and the chunk counts in sc.k, and returns the
// predicted finish time of that configuration.
func (sc *closedScratch) solveSet(paths []Path, n int64, o Options) float64 {
	nf := float64(n)
	lim := o.limits()
	active, off, x0, x, k := sc.active, sc.off, sc.x0, sc.x, sc.k
	pipelined := func(i int) bool { return paths[i].Staged && !o.NoPipeline }
	// eff is the paths with the bandwidths they have while the active set
	// runs (contendedPaths): the paths of an equal-finish split run together
	// from start to end, so its lines use these.
	var eff []Path

	// solveLines fills lines for idx from line(i) plus the launch offset,
	// solves eq. 24 and returns the index (into paths) of the path to drop,
	// or -1 when every share is positive.
	solveLines := func(line func(i int) Line) int {
		sc.lines = sc.lines[:0]
		for _, i := range sc.idx {
			l := line(i)
			l.DeltaUS += off[i]
			sc.lines = append(sc.lines, l)
		}
		sc.theta = ThetaLines(sc.lines, nf, sc.theta[:len(sc.idx)])
		drop, worst := -1, math.Inf(-1)
		for j, i := range sc.idx {
			if sc.theta[j] <= 0 && sc.lines[j].DeltaUS > worst {
				drop, worst = i, sc.lines[j].DeltaUS
			}
		}
		return drop
	}
	tangent := func(i int) Line {
		if !pipelined(i) {
			return UnpipelinedLine(eff[i])
		}
		return PipelineTangent(eff[i], x0[i], lim).Line
	}
	exactLine := func(i int) Line {
		if !paths[i].Staged {
			return DirectLine(eff[i])
		}
		return FixedChunksLine(eff[i], k[i], x[i])
	}

	for {
		sc.idx = sc.idx[:0]
		for i := range paths {
			x[i], k[i] = 0, 0
			if active[i] {
				sc.idx = append(sc.idx, i)
			}
		}
		launchOffsetsUS(paths, active, off)
		eff = contendedPaths(paths, active, sc.eff)
		if &eff[0] != &paths[0] {
			sc.eff = eff
		}
		if len(sc.idx) == 1 {
			i := sc.idx[0]
			x[i], k[i] = nf, 1
			if pipelined(i) {
				k[i] = integerChunks(eff[i], nf, lim)
			}
			break
		}
		// Pass 1: operating point from the bandwidth-only shares.
		var sumB float64
		for _, i := range sc.idx {
			sumB += eff[i].BottleneckGBps()
		}
		for _, i := range sc.idx {
			x0[i] = nf * eff[i].BottleneckGBps() / sumB
		}
		if d := solveLines(tangent); d >= 0 {
			active[d] = false
			continue
		}
		// Pass 2: operating point at the share pass 1 found.
		for j, i := range sc.idx {
			x0[i] = sc.theta[j] * nf
		}
		if d := solveLines(tangent); d >= 0 {
			active[d] = false
			continue
		}
		// Pass 3: integer chunk counts, exact lines for them. The slower
		// stage can change with the share, so re-pick it a few times.
		for j, i := range sc.idx {
			x[i], k[i] = sc.theta[j]*nf, 1
			if pipelined(i) {
				k[i] = integerChunks(eff[i], x[i], lim)
			}
		}
		drop := -1
		for it := 0; it < 3 && drop < 0; it++ {
			drop = solveLines(exactLine)
			for j, i := range sc.idx {
				x[i] = sc.theta[j] * nf
			}
		}
		if drop >= 0 {
			active[drop] = false
			continue
		}
		break
	}
	// Predicted finish: the slowest used path, launched after the others.
	var t float64
	for i := range paths {
		if x[i] > 0 {
			t = math.Max(t, off[i]+eff[i].TimeUS(x[i], k[i]))
		}
	}
	return t
}

// dropMayHelp screens the move "stop using path i": without i the paths
// launched after it start LaunchUS earlier, and each of them can carry at
// most its fastest hop's bandwidth times that much more by the same finish
// time. If that cannot make up for the x[i] bytes i carried, the move cannot
// shorten the transfer and is not worth a solve. The bound holds only when
// the other paths keep their bandwidths: a drop that lifts contention
// (Path.Contention) off another used path is always tried.
func dropMayHelp(paths []Path, used []bool, x []float64, i int) bool {
	if dropLiftsContention(paths, used, i) {
		return true
	}
	var rate float64
	for j := i + 1; j < len(paths); j++ {
		if used[j] {
			rate += bytesPerUS(math.Max(paths[j].Beta1GBps, paths[j].Beta2GBps))
		}
	}
	return x[i] < paths[i].LaunchUS()*rate
}

// dropLiftsContention reports whether no longer using path i speeds up
// another used path (contendedPaths): the direct path slows every used
// staged path with a StagedSlowdown, a staged path with a DirectSlowdown
// slows the used direct path.
func dropLiftsContention(paths []Path, used []bool, i int) bool {
	for j := range paths {
		if j == i || !used[j] {
			continue
		}
		switch {
		case paths[i].Family() == PathDirect && paths[j].Staged && paths[j].Contention.StagedSlowdown > 0:
			return true
		case paths[i].Staged && paths[j].Family() == PathDirect && paths[i].Contention.DirectSlowdown > 0:
			return true
		}
	}
	return false
}
