package model

import (
	"fmt"
	"math"
	"slices"
)

// Fitting the contention term (contention.go) to "together" measurements:
// the direct path and one staged path launched at once, the staged path
// carrying a share of the bytes, timed until both are done
// (TogetherSample). docs/model.md ("Contention between paths") derives the
// model and why these samples determine it: shares below the split where
// both paths finish together measure the direct path's slowdown, shares
// above it the staged path's.
//
// The fit compares ratios, not times: each sample's time divided by the
// direct path alone at the same size, timed in the same run (the median of
// the share-0 samples), against the model's ratio. The solo figures of the
// paths were measured minutes earlier; ratios keep drift between the two
// runs, and an error in the direct path's own figures, out of the
// slowdowns.
//
// The model is not linear in the slowdowns, and there are two of them, each
// in [0, 1): a grid search over them is cheap (a few thousand evaluations
// of OverlapTimeUS) and has no starting point to get wrong. Robustness
// follows FitHockney's scheme with a robust start: a least-trimmed-squares
// fit (the smallest 70% of the squared relative residuals), then samples
// more than OutlierMADs robust deviations from the median residual are
// left out, least squares on the rest, repeated until the set left out
// stops changing.

// TogetherSample is one timing of a transfer of Bytes split between the
// direct path (1-Share of the bytes) and a staged path (Share, pipelined in
// Chunks chunks), both launched at once; US is when the later one
// finished. Share 0 is the direct path alone, timed the same way: the
// reference the fit compares the others with. Chunks 0 means unknown: the
// fit then assumes the chunk count the model would choose (StagedChunks).
type TogetherSample struct {
	Bytes  int64   `json:"bytes"`
	Share  float64 `json:"share"`
	Chunks int     `json:"chunks,omitempty"`
	US     float64 `json:"us"`
}

// ContentionFit is the result of FitContention.
type ContentionFit struct {
	Contention
	// Outliers are the indices (into the samples) left out of the final fit.
	Outliers []int
	// RelRMS is the root mean square relative residual of the time over the
	// inliers with a positive share.
	RelRMS float64
}

// maxSlowdown bounds the search: a path that keeps less than 5% of its
// bandwidth next to the direct one is as good as unusable.
const maxSlowdown = 0.95

// Grid of the search: a coarse pass over [0, maxSlowdown]², then a fine one
// around the coarse optimum.
const (
	coarseSlowdownStep = 0.025
	fineSlowdownStep   = 0.001
)

// trimmedShare is the share of the residuals the robust start keeps.
const trimmedShare = 0.7

// minContentionSigma is the smallest relative spread the outlier test
// assumes for together samples: timings of GPU copies vary by about 1%
// from run to run, and with a handful of samples the trimmed start fits
// most of them almost exactly, which would make a 1% miss look like an
// outlier.
const minContentionSigma = 0.01

// togetherObs is one sample with a positive share, ready to predict.
type togetherObs struct {
	sample   int // index into the samples
	bytes    [2]float64
	chunks   [2]int
	targetUS float64 // the sample's time over its size's drift factor
	paths    [2]Path
}

// FitContention estimates how the direct path and a staged path slow each
// other down from together samples. direct and staged are the two paths'
// figures alone (MeasuredDirectPath, MeasuredStagedPath); o gives the
// chunk limits for samples that do not say how many chunks they ran in. It
// needs at least two samples with a positive share; the share-0 samples,
// if any, are the reference of their size (see above).
//
// Shares on both sides of the split where the two paths finish together
// are needed to determine both slowdowns; where the samples cannot tell two
// values apart, the fit takes the larger slowdown, which makes the
// splitter send fewer bytes over the staged path, not more.
func FitContention(direct, staged Path, samples []TogetherSample, o Options) (ContentionFit, error) {
	if err := o.validate(); err != nil {
		return ContentionFit{}, err
	}
	if direct.Staged || !direct.valid() {
		return ContentionFit{}, fmt.Errorf("contention fit: %q is not a usable direct path (%+v)", direct.Name, direct)
	}
	if !staged.Staged || !staged.valid() {
		return ContentionFit{}, fmt.Errorf("contention fit: %q is not a usable staged path (%+v)", staged.Name, staged)
	}
	staged.Contention = Contention{}
	ref := map[int64][]float64{} // share-0 times per size
	for i, s := range samples {
		if err := s.Validate(); err != nil {
			return ContentionFit{}, fmt.Errorf("contention fit: sample %d: %w", i, err)
		}
		if s.Share == 0 {
			ref[s.Bytes] = append(ref[s.Bytes], s.US)
		}
	}
	var obs []togetherObs
	for i, s := range samples {
		if s.Share == 0 {
			continue
		}
		n := float64(s.Bytes)
		xs := math.Round(s.Share * n)
		if xs < 1 || xs >= n {
			continue // rounds to one path alone: nothing to learn
		}
		drift := 1.0
		if r := ref[s.Bytes]; len(r) > 0 {
			drift = Median(r) / direct.TimeUS(n, 1)
		}
		k := s.Chunks
		if k == 0 {
			k = StagedChunks(staged, xs, o)
		}
		obs = append(obs, togetherObs{
			sample:   i,
			bytes:    [2]float64{n - xs, xs},
			chunks:   [2]int{1, k},
			targetUS: s.US / drift,
			paths:    [2]Path{direct, staged},
		})
	}
	if len(obs) < 2 {
		return ContentionFit{}, fmt.Errorf("contention fit: %d samples with a positive share: need at least 2", len(obs))
	}

	r := make([]float64, len(obs))
	residuals := func(c Contention) []float64 {
		for i := range obs {
			obs[i].paths[1].Contention = c
			pred := OverlapTimeUS(obs[i].paths[:], obs[i].bytes[:], obs[i].chunks[:])
			r[i] = (pred - obs[i].targetUS) / obs[i].targetUS
		}
		return r
	}
	in := make([]bool, len(obs))
	for i := range in {
		in[i] = true
	}
	h := max(2, int(math.Ceil(trimmedShare*float64(len(obs)))))
	sq := make([]float64, 0, len(obs))
	trimmed := func(c Contention) float64 {
		sq = sq[:0]
		for _, v := range residuals(c) {
			sq = append(sq, v*v)
		}
		slices.Sort(sq)
		var s float64
		for _, v := range sq[:min(h, len(sq))] {
			s += v
		}
		return s
	}
	squares := func(c Contention) float64 {
		var s float64
		for i, v := range residuals(c) {
			if in[i] {
				s += v * v
			}
		}
		return s
	}

	c := searchContention(trimmed)
	prev := make([]bool, len(obs))
	for it := 0; it < 20; it++ {
		markResiduals(residuals(c), in, minContentionSigma)
		if it > 0 && slices.Equal(prev, in) {
			break
		}
		copy(prev, in)
		kept := 0
		for _, v := range in {
			if v {
				kept++
			}
		}
		if kept < 2 {
			break
		}
		c = searchContention(squares)
	}

	f := ContentionFit{Contention: c}
	var ss float64
	var m int
	for i, v := range residuals(c) {
		if !in[i] {
			f.Outliers = append(f.Outliers, obs[i].sample)
			continue
		}
		ss += v * v
		m++
	}
	if m > 0 {
		f.RelRMS = math.Sqrt(ss / float64(m))
	}
	return f, nil
}

// searchContention minimizes loss over the slowdowns on a coarse grid and
// then on a fine grid around the coarse optimum. Both grids run from the
// largest slowdowns down and keep the first of equal losses, so that where
// the data cannot tell values apart the larger slowdown wins.
func searchContention(loss func(Contention) float64) Contention {
	best, bestL := Contention{}, math.Inf(1)
	scan := func(d0, d1, s0, s1, step float64) {
		nd := int(math.Round((d1 - d0) / step))
		ns := int(math.Round((s1 - s0) / step))
		for i := nd; i >= 0; i-- {
			for j := ns; j >= 0; j-- {
				c := Contention{DirectSlowdown: d0 + float64(i)*step, StagedSlowdown: s0 + float64(j)*step}
				if l := loss(c); l < bestL {
					best, bestL = c, l
				}
			}
		}
	}
	scan(0, maxSlowdown, 0, maxSlowdown, coarseSlowdownStep)
	around := func(v float64) (lo, hi float64) {
		return math.Max(0, v-coarseSlowdownStep), math.Min(maxSlowdown, v+coarseSlowdownStep)
	}
	d0, d1 := around(best.DirectSlowdown)
	s0, s1 := around(best.StagedSlowdown)
	scan(d0, d1, s0, s1, fineSlowdownStep)
	return best
}

// Validate checks one together sample: positive bytes and time, a share in
// [0, 1), no negative chunk count.
func (s TogetherSample) Validate() error {
	if s.Bytes <= 0 || !finitePos(s.US) || !(s.Share >= 0 && s.Share < 1) || s.Chunks < 0 {
		return fmt.Errorf("%d bytes, share %g, %d chunks, %g us: want positive bytes and time, share in [0, 1), chunks >= 0", s.Bytes, s.Share, s.Chunks, s.US)
	}
	return nil
}

// StagedChunks is the chunk count the model gives staged path p carrying
// bytes on its own under o: what `goring calibrate` pipelines a staged
// share in when it times the paths together, so that the samples run the
// way the engine will run the split.
func StagedChunks(p Path, bytes float64, o Options) int {
	if !p.Staged || o.NoPipeline || bytes <= 0 {
		return 1
	}
	return integerChunks(p, bytes, o.limits())
}
