package model

import "math"

// The reference solver: no closed form, no tangent, just the definition of
// the optimum (Multi-path model, problem (5), with the pipelined times of eq. 13 and
// the launch offsets of Algorithm 1 line 20).
//
// For a set S of paths and a candidate finish time T, every path of S can
// carry at most x_i(T) bytes: the largest x whose best time over integer
// chunk counts, started at the path's launch offset within S, is still <= T.
// x_i(T) grows with T, so bisection finds the smallest T whose whole-byte
// shares add up to the message. Launch offsets make a path's presence cost
// the paths after it, so whether a path is worth using depends on the
// others; with at most a handful of paths per GPU pair the solver simply
// tries every non-empty subset (skipping at once those that cannot beat the
// best finish time found so far) and keeps the best.

// maxSubsetPaths bounds the exhaustive search (2^p subsets). Larger lists
// keep the first maxSubsetPaths paths in launch order.
const maxSubsetPaths = 12

// chunkedBytesByUS is the largest x a staged path can carry in exactly k
// chunks and finish within budgetUS of its launch: both pieces of
// T_k(x) = max(A_k(x), B_k(x)) must fit. It is negative when nothing fits
// or when chunks would fall under the minimum chunk size.
func chunkedBytesByUS(p Path, budgetUS float64, k int, lim chunkLimits) float64 {
	kf := float64(k)
	e := p.EpsilonUS + p.Alpha2US
	ib1, ib2 := usPerByte(p.Beta1GBps), usPerByte(p.Beta2GBps)
	numA := budgetUS - kf*p.Alpha1US - e
	numB := budgetUS - p.Alpha1US - kf*e
	if numA <= 0 || numB <= 0 {
		return -1
	}
	x := math.Min(numA/(ib1+ib2/kf), numB/(ib1/kf+ib2))
	if k > 1 && x < kf*lim.minChunkBytes {
		return -1
	}
	return x
}

// maxBytesByUS returns the largest x path p can carry within budgetUS of its
// launch, with the chunk count that achieves it (0, 0 when nothing fits).
//
// For a staged path, x_k = chunkedBytesByUS(k) is quasi-concave in k: each
// piece is a concave non-negative function of k over a positive affine one,
// the minimum of quasi-concave functions is quasi-concave, and the
// infeasible k form a suffix (fixed costs and the chunk floor only grow with
// k). So a binary search for the first k where x_k stops growing finds the
// best k; TestMaxBytesBinarySearchMatchesScan checks it against a full scan.
func maxBytesByUS(p Path, budgetUS float64, lim chunkLimits, pipeline bool) (float64, int) {
	if !p.Staged {
		x := (budgetUS - p.Alpha1US) * bytesPerUS(p.Beta1GBps)
		if x <= 0 {
			return 0, 0
		}
		return x, 1
	}
	lo, hi := 1, lim.maxChunks
	if !pipeline {
		hi = 1
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if chunkedBytesByUS(p, budgetUS, mid, lim) < chunkedBytesByUS(p, budgetUS, mid+1, lim) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	x := chunkedBytesByUS(p, budgetUS, lo, lim)
	if x <= 0 {
		return 0, 0
	}
	return x, lo
}

// maxBytesByUSScan is maxBytesByUS by trying every chunk count; tests use
// it to check the binary search.
func maxBytesByUSScan(p Path, budgetUS float64, lim chunkLimits, pipeline bool) (float64, int) {
	if !p.Staged {
		return maxBytesByUS(p, budgetUS, lim, pipeline)
	}
	kMax := lim.maxChunks
	if !pipeline {
		kMax = 1
	}
	best, bestK := 0.0, 0
	for k := 1; k <= kMax; k++ {
		if x := chunkedBytesByUS(p, budgetUS, k, lim); x > best {
			best, bestK = x, k
		}
	}
	return best, bestK
}

// bestChunks is the chunk count that minimizes the time of x bytes on p.
func bestChunks(p Path, x float64, lim chunkLimits, pipeline bool) int {
	if !p.Staged || !pipeline {
		return 1
	}
	best, bestT := 1, p.TimeUS(x, 1)
	for k := 2; k <= lim.maxChunks && float64(k)*lim.minChunkBytes <= x; k++ {
		if t := p.TimeUS(x, k); t < bestT {
			best, bestT = k, t
		}
	}
	return best
}

func solveExact(paths []Path, n int64, o Options) Split {
	p := min(len(paths), maxSubsetPaths)
	nf := float64(n)
	lim := o.limits()
	pipeline := !o.NoPipeline
	active := make([]bool, len(paths))
	off := make([]float64, len(paths))
	x := make([]float64, len(paths))
	k := make([]int, len(paths))
	bestX := make([]float64, len(paths))
	bestK := make([]int, len(paths))
	var eff, effBuf []Path // the paths as they run together (contendedPaths of active)

	// sumAt fills x and k for finish time T and returns the whole bytes the
	// active paths can carry by then.
	sumAt := func(T float64) float64 {
		var sum float64
		for i := range paths {
			x[i], k[i] = 0, 0
			if active[i] {
				x[i], k[i] = maxBytesByUS(eff[i], T-off[i], lim, pipeline)
				sum += math.Floor(x[i])
			}
		}
		return sum
	}
	// Any single path carrying everything unpipelined bounds the optimum.
	bestT := math.Inf(1)
	for i := 0; i < p; i++ {
		bestT = math.Min(bestT, paths[i].TimeUS(nf, 1)*(1+1e-12)+1e-9)
	}
	found := false
	for mask := 1; mask < 1<<p; mask++ {
		for i := range active {
			active[i] = i < p && mask&(1<<i) != 0
		}
		launchOffsetsUS(paths, active, off)
		if eff = contendedPaths(paths, active, effBuf); &eff[0] != &paths[0] {
			effBuf = eff
		}
		if sumAt(bestT) < nf {
			continue // cannot finish by the best time so far
		}
		lo, hi := 0.0, bestT
		for it := 0; it < 200 && hi-lo > 1e-10*hi; it++ {
			mid := (lo + hi) / 2
			if sumAt(mid) >= nf {
				hi = mid
			} else {
				lo = mid
			}
		}
		sumAt(hi)
		if !found || hi < bestT {
			bestT, found = hi, true
			copy(bestX, x)
			copy(bestK, k)
		}
	}
	if !found { // unreachable: the single-path bound is feasible
		d := 0
		bestX[d], bestK[d] = nf, 1
	}
	// The remainder path may carry less than its share at T; give it the
	// chunk count that is best for what it really carries.
	if rem := remainderIndex(paths, bestX); rem >= 0 {
		for i := range active {
			active[i] = bestX[i] > 0
		}
		eff = contendedPaths(paths, active, effBuf)
		var others float64
		for i := range paths {
			if i != rem {
				others += math.Floor(bestX[i])
			}
		}
		bestK[rem] = bestChunks(eff[rem], nf-others, lim, pipeline)
	}
	return assemble(paths, n, bestX, bestK, o)
}
