package model

import (
	"fmt"
	"math"
	"slices"
)

// Fitting Hockney parameters to measurements (Multi-path model, section 4 step 1:
// "the performance model parameters are extracted once per system
// topology"). `goring calibrate` times transfers of several sizes over one
// path; FitHockney turns the (bytes, time) pairs into alpha and beta.
//
// Two things make a plain least-squares line a poor fit here:
//   - sizes span decades (1 KiB to 1 GiB), so absolute residuals of the big
//     transfers swamp the small ones and alpha comes out as noise; the fit
//     therefore minimizes relative residuals (weights 1/t^2);
//   - a timing run now and then lands on a busy machine (a page fault, a
//     context switch, another job's copy), giving a few points far off.
//
// So the fit starts from a robust line (Theil-Sen slope: the median of the
// slopes between every two sizes; intercept: the median offset among the
// smaller half of the sizes, where an error in the slope matters least),
// flags points whose relative residual is more than OutlierMADs robust
// standard deviations (1.4826 * median absolute deviation) from the median
// residual, refits the weighted least-squares line on the rest, and repeats
// with the new line until the set of flagged points stops changing (a point
// flagged against a rough line can come back against a better one).

// Sample is one measurement: a transfer of Bytes took TimeUS.
type Sample struct {
	Bytes  float64
	TimeUS float64
}

// Fit is the result of FitHockney.
type Fit struct {
	AlphaUS  float64
	BetaGBps float64
	// Outliers are the indices (into the samples) left out of the final fit.
	Outliers []int
	// RelRMS is the root mean square relative residual over the inliers.
	RelRMS float64
}

// OutlierMADs is how many robust standard deviations from the median
// residual a sample may lie before FitHockney leaves it out.
const OutlierMADs = 3.5

// minRelSigma is the smallest relative spread the outlier test assumes, so
// that noise-free data (MAD = 0) does not turn rounding into outliers.
const minRelSigma = 1e-3

// FitHockney fits t = alpha + bytes/beta to samples, robust to a few
// outliers (see above). It needs at least two distinct sizes, finite
// non-negative sizes and positive times. A negative intercept is clamped to
// 0 and the slope refit through the origin.
func FitHockney(samples []Sample) (Fit, error) {
	sizes := map[float64]bool{}
	for i, s := range samples {
		if !finiteNonNeg(s.Bytes) || !finitePos(s.TimeUS) {
			return Fit{}, fmt.Errorf("sample %d: bytes %g, time %g us: want finite bytes >= 0 and time > 0", i, s.Bytes, s.TimeUS)
		}
		sizes[s.Bytes] = true
	}
	if len(sizes) < 2 {
		return Fit{}, fmt.Errorf("fit: %d samples of %d distinct sizes: need at least 2 sizes", len(samples), len(sizes))
	}
	a, b := theilSen(samples)
	in := make([]bool, len(samples))
	var prev []bool
	for it := 0; it < 20; it++ {
		markInliers(samples, a, b, in)
		if prev != nil && slices.Equal(prev, in) {
			break
		}
		prev = append(prev[:0], in...)
		na, nb, ok := weightedLine(samples, in)
		if !ok {
			break
		}
		a, b = na, nb
	}
	if a < 0 {
		a = 0
		b = weightedSlopeThroughOrigin(samples, in)
	}
	if !(b > 0) {
		return Fit{}, fmt.Errorf("fit: time does not grow with size (slope %g us/byte): not a Hockney path", b)
	}
	f := Fit{AlphaUS: a, BetaGBps: 1 / b / 1e3}
	var ss float64
	var m int
	for i, s := range samples {
		if !in[i] {
			f.Outliers = append(f.Outliers, i)
			continue
		}
		r := (s.TimeUS - a - b*s.Bytes) / s.TimeUS
		ss += r * r
		m++
	}
	f.RelRMS = math.Sqrt(ss / float64(m))
	return f, nil
}

// theilSen is the robust starting line: the median pairwise slope, and the
// median offset t - b*x over the smaller half of the sizes.
func theilSen(samples []Sample) (a, b float64) {
	var slopes []float64
	for i := range samples {
		for j := i + 1; j < len(samples); j++ {
			dx := samples[j].Bytes - samples[i].Bytes
			if dx != 0 {
				slopes = append(slopes, (samples[j].TimeUS-samples[i].TimeUS)/dx)
			}
		}
	}
	b = Median(slopes)
	xs := make([]float64, len(samples))
	for i, s := range samples {
		xs[i] = s.Bytes
	}
	cut := Median(xs)
	var offs []float64
	for _, s := range samples {
		if s.Bytes <= cut {
			offs = append(offs, s.TimeUS-b*s.Bytes)
		}
	}
	return Median(offs), b
}

// markInliers sets in[i] for the samples whose relative residual against
// (a, b) is within OutlierMADs robust deviations of the median residual.
func markInliers(samples []Sample, a, b float64, in []bool) {
	r := make([]float64, len(samples))
	for i, s := range samples {
		r[i] = (s.TimeUS - a - b*s.Bytes) / s.TimeUS
	}
	markResiduals(r, in, minRelSigma)
}

// markResiduals sets in[i] for the residuals within OutlierMADs robust
// standard deviations (1.4826 * median absolute deviation, at least
// minSigma) of the median residual.
func markResiduals(r []float64, in []bool, minSigma float64) {
	med := Median(r)
	dev := make([]float64, len(r))
	for i := range r {
		dev[i] = math.Abs(r[i] - med)
	}
	sigma := math.Max(1.4826*Median(dev), minSigma)
	for i := range r {
		in[i] = dev[i] <= OutlierMADs*sigma
	}
}

// weightedLine is least squares with weights 1/t^2 over the samples in in.
// ok is false when the kept samples do not span two sizes.
func weightedLine(samples []Sample, in []bool) (a, b float64, ok bool) {
	var sw, sx, sy, sxx, sxy float64
	for i, s := range samples {
		if !in[i] {
			continue
		}
		w := 1 / (s.TimeUS * s.TimeUS)
		sw += w
		sx += w * s.Bytes
		sy += w * s.TimeUS
		sxx += w * s.Bytes * s.Bytes
		sxy += w * s.Bytes * s.TimeUS
	}
	det := sw*sxx - sx*sx
	if sw == 0 || det <= 1e-12*sw*sxx {
		return 0, 0, false
	}
	b = (sw*sxy - sx*sy) / det
	a = (sy - b*sx) / sw
	return a, b, true
}

func weightedSlopeThroughOrigin(samples []Sample, in []bool) float64 {
	var sxx, sxy float64
	for i, s := range samples {
		if !in[i] {
			continue
		}
		w := 1 / (s.TimeUS * s.TimeUS)
		sxx += w * s.Bytes * s.Bytes
		sxy += w * s.Bytes * s.TimeUS
	}
	return sxy / sxx
}

// Median is the median of v (NaN when v is empty), the robust fits'
// centre; v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	c := slices.Clone(v)
	slices.Sort(c)
	m := len(c) / 2
	if len(c)%2 == 1 {
		return c[m]
	}
	return (c[m-1] + c[m]) / 2
}
