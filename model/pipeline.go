package model

import "math"

// Pipelined staged paths (Multi-path model, section 3.4, eq. 12-24).
//
// A staged path that cuts its x bytes into k chunks of c = x/k bytes takes
// (PipelinedTimeUS)
//
//	A_k(x) = k*alpha1 + e + x*(1/beta1 + 1/(k*beta2))   first hop slower (eq. 13 case 1)
//	B_k(x) = alpha1 + k*e + x*(1/(k*beta1) + 1/beta2)   second hop slower (eq. 13 case 2)
//	T_k(x) = max(A_k(x), B_k(x)),                        e = epsilon + alpha2
//
// For a fixed k both pieces are straight lines in x. The best k grows like
// sqrt(x) (eq. 14, 15), which makes the best time concave in x (eq. 17, 18)
// and the equal-finish equations non-linear. The paper replaces k by a
// linear function of x with a topology constant phi (eq. 19); docs/model.md
// derives phi: a k proportional to x is a fixed chunk size c, the time with a
// fixed chunk size is a straight line, and choosing c as the best chunk for
// the bytes the path is expected to carry makes that line the tangent of the
// best-time curve at that point. This file computes that tangent.

// PipeCase says which stage of a pipelined staged path is the slower one.
type PipeCase int

// Cases of Multi-path model eq. 13.
const (
	FirstHopBound  PipeCase = 1 // stage 1 (alpha1 + c/beta1) is slower: eq. 13 case 1
	SecondHopBound PipeCase = 2 // stage 2 (epsilon + alpha2 + c/beta2) is slower: case 2
)

// chunkLimits bounds the chunking of one path.
type chunkLimits struct {
	maxChunks     int
	minChunkBytes float64
}

// Tangent is the straight-line model of a pipelined staged path around an
// operating point of X0Bytes (Multi-path model, eq. 19-22).
type Tangent struct {
	Case       PipeCase
	Phi        float64 // phi^1 or phi^2 of eq. 19 (dimensionless)
	ChunkBytes float64 // c; k = x/c chunks for x bytes
	Line       Line    // Omega and Delta of eq. 22
}

// OptimalChunksContinuous is eq. 14 / 15: the real k that minimizes the
// time of x bytes on p in the given case, ignoring limits.
func OptimalChunksContinuous(p Path, x float64, c PipeCase) float64 {
	if c == FirstHopBound {
		return math.Sqrt(x / (p.Alpha1US * bytesPerUS(p.Beta2GBps)))
	}
	return math.Sqrt(x / ((p.EpsilonUS + p.Alpha2US) * bytesPerUS(p.Beta1GBps)))
}

// BestTimeContinuousUS is eq. 17 / 18: the time of x bytes with the k of
// eq. 14 / 15, as a real number, in the given case.
func BestTimeContinuousUS(p Path, x float64, c PipeCase) float64 {
	e := p.EpsilonUS + p.Alpha2US
	if c == FirstHopBound {
		return 2*math.Sqrt(x*p.Alpha1US*usPerByte(p.Beta2GBps)) + x*usPerByte(p.Beta1GBps) + e
	}
	return 2*math.Sqrt(x*e*usPerByte(p.Beta1GBps)) + x*usPerByte(p.Beta2GBps) + p.Alpha1US
}

// chunkTimesUS returns the two pieces A and B of a pipelined staged path
// carrying x0 bytes in chunks of c bytes, with k = x0/c as a real number.
func chunkTimesUS(p Path, x0, c float64) (a, b float64) {
	k := x0 / c
	e := p.EpsilonUS + p.Alpha2US
	ib1, ib2 := usPerByte(p.Beta1GBps), usPerByte(p.Beta2GBps)
	a = k*p.Alpha1US + x0*ib1 + e + c*ib2
	b = p.Alpha1US + c*ib1 + k*e + x0*ib2
	return a, b
}

// PipelineTangent returns the straight-line model of staged path p around
// x0 bytes: the chunk size c that minimizes max(A, B) at x0 (k = x0/c real,
// c within the limits), and the tangent of the best-time curve there: the
// line of the slower stage for chunks of c bytes (eq. 22), or, when the
// chunk count is pinned at 1 or MaxChunks, the line for that fixed count.
//
// With the slower stage known, the best c is sqrt(x0*alpha1*beta2) (case 1,
// eq. 14 as a chunk size) or sqrt(x0*e*beta1) (case 2, eq. 15); when neither
// is consistent with its own case the optimum sits where the two stages take
// equal time, c = (e - alpha1)/(1/beta1 - 1/beta2). The candidates are
// clamped to the limits and the best one is kept.
func PipelineTangent(p Path, x0 float64, lim chunkLimits) Tangent {
	e := p.EpsilonUS + p.Alpha2US
	b1, b2 := bytesPerUS(p.Beta1GBps), bytesPerUS(p.Beta2GBps)
	hi := x0
	lo := math.Max(lim.minChunkBytes, x0/float64(lim.maxChunks))
	if lo > hi {
		lo = hi
	}
	clamp := func(c float64) float64 {
		if math.IsNaN(c) || c < lo {
			return lo
		}
		if c > hi {
			return hi
		}
		return c
	}
	cands := [5]float64{
		clamp(math.Sqrt(x0 * p.Alpha1US * b2)),
		clamp(math.Sqrt(x0 * e * b1)),
		lo, hi, lo,
	}
	if d := 1/b1 - 1/b2; d != 0 {
		cands[4] = clamp((e - p.Alpha1US) / d)
	}
	best, bestT := cands[0], math.Inf(1)
	for _, c := range cands {
		a, b := chunkTimesUS(p, x0, c)
		if t := math.Max(a, b); t < bestT {
			best, bestT = c, t
		}
	}
	c := best
	a, b := chunkTimesUS(p, x0, c)
	t := Tangent{Case: FirstHopBound, ChunkBytes: c, Phi: p.Alpha1US * b2 / c}
	if a < b {
		t.Case, t.Phi = SecondHopBound, e*b1/c
	}
	// When a bound on the chunk count binds (one chunk, or MaxChunks), the
	// best time near x0 is the time with that many chunks, not with that
	// chunk size: the tangent is the fixed-k line (envelope theorem). At an
	// interior optimum, or when the chunk-size floor binds, the fixed chunk
	// size line is the tangent (eq. 22).
	switch kMaxC := x0 / float64(lim.maxChunks); {
	case c >= hi:
		t.Line = FixedChunksLine(p, 1, x0)
		return t
	case c <= kMaxC && kMaxC >= lim.minChunkBytes:
		t.Line = FixedChunksLine(p, lim.maxChunks, x0)
		return t
	}
	if t.Case == FirstHopBound {
		t.Line = Line{OmegaUSPerByte: 1/b1 + p.Alpha1US/c, DeltaUS: e + c/b2}
	} else {
		t.Line = Line{OmegaUSPerByte: 1/b2 + e/c, DeltaUS: p.Alpha1US + c/b1}
	}
	return t
}

// FixedChunksLine is the exact time of staged path p in k chunks as a line
// in x, taking the piece (A_k or B_k) that is the slower one at x. For k = 1
// both pieces are UnpipelinedLine.
func FixedChunksLine(p Path, k int, x float64) Line {
	e := p.EpsilonUS + p.Alpha2US
	ib1, ib2 := usPerByte(p.Beta1GBps), usPerByte(p.Beta2GBps)
	kf := float64(k)
	a := Line{OmegaUSPerByte: ib1 + ib2/kf, DeltaUS: kf*p.Alpha1US + e}
	b := Line{OmegaUSPerByte: ib1/kf + ib2, DeltaUS: p.Alpha1US + kf*e}
	if a.At(x) >= b.At(x) {
		return a
	}
	return b
}

// roundChunks turns a real chunk count into the integer one a transfer of x
// bytes may use: at least 1, at most maxChunks, chunks of at least
// minChunkBytes (unless one chunk).
func roundChunks(kReal, x float64, lim chunkLimits) int {
	k := int(math.Round(kReal))
	if kMax := int(x / lim.minChunkBytes); k > kMax {
		k = kMax
	}
	if k > lim.maxChunks {
		k = lim.maxChunks
	}
	if k < 1 {
		k = 1
	}
	return k
}

// integerChunks is the whole chunk count for x bytes on staged path p: the
// best chunk size at x (PipelineTangent) gives a real count; of the whole
// numbers either side of it, the one with the shorter time wins.
func integerChunks(p Path, x float64, lim chunkLimits) int {
	t := PipelineTangent(p, x, lim)
	kReal := x / t.ChunkBytes
	lo := roundChunks(math.Floor(kReal), x, lim)
	hi := roundChunks(math.Ceil(kReal), x, lim)
	if p.TimeUS(x, hi) < p.TimeUS(x, lo) {
		return hi
	}
	return lo
}
