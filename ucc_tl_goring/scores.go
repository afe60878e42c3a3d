//go:build ucc

package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/tune"
)

// claimScore is the score goring gives the sizes its model claims: one
// above tl/ucp's default (UCC_TL_UCP_DEFAULT_SCORE, 10), so UCC picks
// goring there and tl/ucp everywhere else goring keeps its default of 5.
// Layers that score higher by default (tl/cuda, tl/nccl) keep what they
// claim: the model has no figures for them.
const claimScore = 11

// scoredColls are the collectives the model predicts. Alltoall(v) run
// pairwise in goring and in tl/ucp alike, so the model sees no
// difference there and leaves them at the default score.
var scoredColls = []coll.Collective{coll.Allgather, coll.Allreduce, coll.ReduceScatter, coll.Bcast}

// maxModelRanks bounds the teams the model predicts: its simulations
// run when a team is created, and their cost grows quickly with the
// ranks (measured on the development machine, all four collectives at
// every size: 16 ranks 0.08 s on host memory and 0.4 s on a GPU per rank;
// 32 ranks 0.25 s and 3.5 s; 64 ranks 1.1 s and 40 s).
const maxModelRanks = 16

// teamShape is what the model needs of a team: its size, whether every
// rank runs on this host, how many GPUs this host has (0: no CUDA driver
// or no push engine) and the largest call of goring's C path.
type teamShape struct {
	size     int
	oneHost  bool
	gpus     int
	cpathMax int64
	// cal is the context's calibration (nil: none); the GPU regime runs
	// on its measured links when the team has a rank per GPU of the
	// machine it was measured on.
	cal *machineCalibration
}

// regimes are the model's regimes for a team of shape s, by UCC memory
// type name, with a note for each memory type it has no model of. Only
// teams on one host are modelled: across hosts the links and UCX's
// network protocols would need figures the model does not have yet.
func (s teamShape) regimes() (map[string]tune.Regime, []string) {
	out := map[string]tune.Regime{}
	var notes []string
	if s.size < 2 {
		return out, []string{fmt.Sprintf("a team of %d has nothing to predict", s.size)}
	}
	if !s.oneHost {
		return out, []string{"the team spans hosts: no model of the network there"}
	}
	if s.size > maxModelRanks {
		return out, []string{fmt.Sprintf("a team of %d ranks: the model predicts teams of up to %d", s.size, maxModelRanks)}
	}
	if r, err := tune.Host(s.size, s.cpathMax); err == nil {
		out["host"] = r
	} else {
		notes = append(notes, "host: "+err.Error())
	}
	switch {
	case s.gpus == 0:
		notes = append(notes, "cuda: no CUDA driver or push engine")
	case s.gpus == 1:
		if r, err := tune.SharedGPU(s.size); err == nil {
			out["cuda"] = r
		} else {
			notes = append(notes, "cuda: "+err.Error())
		}
	case s.size <= s.gpus:
		r, err := tune.GPUs(s.size)
		if err != nil {
			notes = append(notes, "cuda: "+err.Error())
			break
		}
		if s.cal != nil && s.size == s.gpus {
			cr, _, err := r.Calibrated(s.cal.cal, s.cal.gpuModel)
			if err != nil {
				notes = append(notes, "cuda: without the calibration: "+err.Error())
			} else {
				r = cr
				notes = append(notes, "cuda: on the links of "+s.cal.file)
			}
		}
		out["cuda"] = r
	default:
		notes = append(notes, fmt.Sprintf("cuda: %d ranks on %d GPUs: no model of ranks sharing several GPUs", s.size, s.gpus))
	}
	return out, notes
}

// modelScores is the UCC score string of the sizes goring's model
// predicts it faster than tl/ucp on a team of shape s, for the algorithms
// choose names, and a line that says what it found. It never fails: a
// regime it cannot predict claims nothing.
func modelScores(s teamShape, choose func(c coll.Collective, B int64, host bool) (string, string)) (string, string) {
	regimes, notes := s.regimes()
	var entries, claimed []string
	for _, mem := range []string{"host", "cuda"} {
		r, ok := regimes[mem]
		if !ok {
			continue
		}
		host := mem == "host"
		for _, c := range scoredColls {
			pts, err := tune.Compare(r, c, 4, tune.Sizes(), func(c coll.Collective, B int64) (string, string) { return choose(c, B, host) })
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s %s: %v", mem, c, err))
				continue
			}
			ranges := tune.Ranges(pts)
			str, err := tune.TuneString(c, mem, s.size, ranges, claimScore)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s %s: %v", mem, c, err))
				continue
			}
			if str != "" {
				entries = append(entries, str)
				claimed = append(claimed, str)
			}
		}
	}
	summary := "claims nothing"
	if len(claimed) > 0 {
		summary = "claims " + strings.Join(claimed, "#")
	}
	if len(notes) > 0 {
		summary += " (" + strings.Join(notes, "; ") + ")"
	}
	return strings.Join(entries, "#"), summary
}

// scoreCache keeps the model's answer per team shape and context: a
// process creates many teams of few shapes (UCC's sub-teams, ucc_test_mpi's
// team sets), and the answer depends on nothing else.
var scoreCache struct {
	sync.Mutex
	m map[scoreKey][2]string
}

type scoreKey struct {
	algs  string // the context's algorithm options, which choose what runs
	shape teamShape
}

// scores is the model's score string for t and its summary line, or
// nothing when the context's scores are fixed.
func (t *tlTeam) scores() (string, string) {
	if t.ctx.opts.fixedScores {
		return "", "scores=fixed: the default score everywhere"
	}
	s := teamShape{size: t.size, oneHost: t.oneHost}
	if t.engine != nil {
		if n, err := cuda.DeviceCount(); err == nil {
			s.gpus = n
		}
	}
	if t.cpath != nil {
		s.cpathMax = t.ctx.opts.cpathMax
	}
	s.cal = t.ctx.cal
	k := scoreKey{fmt.Sprint(t.ctx.opts.algs, t.ctx.opts.chosen), s}
	scoreCache.Lock()
	defer scoreCache.Unlock()
	if v, ok := scoreCache.m[k]; ok {
		return v[0], v[1]
	}
	str, summary := modelScores(s, t.teamAlg)
	if scoreCache.m == nil {
		scoreCache.m = map[scoreKey][2]string{}
	}
	scoreCache.m[k] = [2]string{str, summary}
	return str, summary
}
