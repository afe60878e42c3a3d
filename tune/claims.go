package tune

import (
	"fmt"
	"strings"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/coll"
)

// ClaimScore is the score goring gives the sizes its model claims: one
// above tl/ucp's default (UCC_TL_UCP_DEFAULT_SCORE, 10), so UCC picks
// goring there and tl/ucp everywhere else goring keeps its default of 5.
// Layers that score higher by default (tl/cuda, tl/nccl) keep what they
// claim: the model has no figures for them.
const ClaimScore = 11

// ScoredColls are the collectives the model predicts. Alltoall(v) run
// pairwise in goring and in tl/ucp alike, so the model sees no difference
// there and leaves them at the default score.
var ScoredColls = []coll.Collective{coll.Allgather, coll.Allreduce, coll.ReduceScatter, coll.Bcast}

// MaxRanks bounds the teams the model predicts: its simulations run when
// a team is created, and their cost grows quickly with the ranks
// (BenchmarkClaims on the development machine, all four collectives at
// every size: 16 ranks 0.08 s on host memory and 0.36 s on a GPU per
// rank; 32 ranks 0.27 s and 3.3 s).
const MaxRanks = 16

// Shape is what the model needs of a team: its size, whether every rank
// runs on one host, how many GPUs that host has (0: no CUDA driver or no
// push engine), the largest call of goring's C path, and a calibration of
// the machine (nil: none) with the driver's name of its GPUs.
type Shape struct {
	Size     int
	OneHost  bool
	GPUs     int
	CMax     int64
	Cal      *calib.Calibration
	CalName  string // how notes name the calibration (its file)
	GPUModel string
	// Lanes are the lanes each rank opened for host calls with
	// lanes=auto (0 or 1: one lane; a lane count the user named is not
	// modelled).
	Lanes int
	// Cross is the threads each rank runs cross-memory reads on with
	// crossmem=auto (0: off; a thread count the user named is not
	// claimed for).
	Cross int
	// Leader is the engine of the leader algorithms on a shared GPU
	// (direct.Model{}; nil: they are priced as messages).
	Leader Leader
}

// Regimes are the model's regimes for a team of shape s by UCC memory
// type name ("host", "cuda"), with a note for each memory type it has no
// model of. Only teams on one host are modelled: across hosts the links
// and UCX's network protocols would need figures the model does not have
// yet.
func (s Shape) Regimes() (map[string]Regime, []string) {
	out := map[string]Regime{}
	var notes []string
	switch {
	case s.Size < 2:
		return out, []string{fmt.Sprintf("a team of %d has nothing to predict", s.Size)}
	case !s.OneHost:
		return out, []string{"the team spans hosts: no model of the network there"}
	case s.Size > MaxRanks:
		return out, []string{fmt.Sprintf("a team of %d ranks: the model predicts teams of up to %d", s.Size, MaxRanks)}
	}
	if r, err := Host(s.Size, s.CMax); err == nil {
		r.Lanes, r.Cross = s.Lanes, s.Cross
		out["host"] = r
	} else {
		notes = append(notes, "host: "+err.Error())
	}
	switch {
	case s.GPUs == 0:
		notes = append(notes, "cuda: no CUDA driver or push engine")
	case s.GPUs == 1:
		if r, err := SharedGPU(s.Size, s.Leader); err == nil {
			out["cuda"] = r
		} else {
			notes = append(notes, "cuda: "+err.Error())
		}
	case s.Size <= s.GPUs:
		r, err := GPUs(s.Size)
		if err != nil {
			notes = append(notes, "cuda: "+err.Error())
			break
		}
		if s.Cal != nil && s.Size == s.GPUs {
			cr, _, err := r.Calibrated(s.Cal, s.GPUModel)
			if err != nil {
				notes = append(notes, "cuda: without the calibration: "+err.Error())
			} else {
				r = cr
				notes = append(notes, "cuda: on the links of "+s.CalName)
			}
		}
		out["cuda"] = r
	default:
		notes = append(notes, fmt.Sprintf("cuda: %d ranks on %d GPUs: no model of ranks sharing several GPUs", s.Size, s.GPUs))
	}
	return out, notes
}

// MemChooser names goring's algorithm for c on bytes of host or device
// memory (Chooser per memory type).
type MemChooser func(c coll.Collective, bytes int64, host bool) (alg, fallback string)

// Claims is what the model claims on a team of shape s for the
// algorithms choose names: the UCC score string of the claimed ranges
// (ClaimScore), the predictions behind it per "mem collective", and a line
// saying what it found. A regime or collective it cannot predict claims
// nothing and is named in the line.
func Claims(s Shape, choose MemChooser) (string, map[string][]Point, string) {
	regimes, notes := s.Regimes()
	var entries []string
	points := map[string][]Point{}
	for _, mem := range []string{"host", "cuda"} {
		r, ok := regimes[mem]
		if !ok {
			continue
		}
		host := mem == "host"
		for _, c := range ScoredColls {
			pts, err := Compare(r, c, 4, Sizes(), func(c coll.Collective, b int64) (string, string) { return choose(c, b, host) })
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s %s: %v", mem, c, err))
				continue
			}
			points[mem+" "+string(c)] = pts
			str, err := TuneString(c, mem, s.Size, Ranges(pts), ClaimScore)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s %s: %v", mem, c, err))
				continue
			}
			if str != "" {
				entries = append(entries, str)
			}
		}
	}
	str := strings.Join(entries, "#")
	summary := "claims nothing"
	if str != "" {
		summary = "claims " + str
	}
	if len(notes) > 0 {
		summary += " (" + strings.Join(notes, "; ") + ")"
	}
	return str, points, summary
}
