package team

import (
	"errors"
	"strings"
	"sync"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/tune"
)

// The team layer's default scores come from goring's model (package
// tune): goring claims the collectives and sizes where it predicts the
// algorithm this team would run faster than tl/ucp's default one.

// scoreCache keeps the model's answer per team shape and options: a
// process creates many teams of few shapes (UCC's sub-teams, ucc_test_mpi's
// team sets), and the answer depends on nothing else.
var scoreCache struct {
	sync.Mutex
	m map[scoreKey][2]string
}

type scoreKey struct {
	algs   string // the context's algorithm options, which choose what runs
	shape  tune.Shape
	layers string // the context's team layers (claims by measurement)
	claims string // the context's claims file (claims.go), by its name
	node   bool   // the team can run node kernels
	shared bool   // the team's ranks share one GPU (the leader's)
}

// shape is what the model needs of t. A lazy team that has not connected
// has no workers, C path or crossmem team yet: the shape takes what it
// will have (the same decisions connect makes).
func (t *Team) shape() tune.Shape {
	s := tune.Shape{Size: t.size, OneHost: t.oneHost, Leader: direct.Model{}}
	if t.engine != nil {
		s.GPUs = t.hostGPUs()
	}
	unopened := t.tr == nil && t.link != nil
	lanes := len(t.lanes) + 1
	if unopened {
		lanes = t.laneCount()
	}
	if t.cpath != nil || (unopened && t.cpathWanted(lanes)) {
		s.CMax = t.ctx.opts.cpathMax
	}
	if t.ctx.opts.lanes == 0 { // lanes=auto: the lanes this team opens
		s.Lanes = lanes
	}
	if t.ctx.opts.crossmem == crossmemAuto && (t.cross != nil || (unopened && t.crossDecide > 0 && t.oneHost)) {
		s.Cross = t.crossDecide
	}
	if mc := t.ctx.cal; mc != nil {
		s.Cal, s.CalName, s.GPUModel = mc.cal, mc.file, mc.gpuModel
	}
	return s
}

// Scores is scores for a team that knows its shape: connected, or lazy
// (which knows it from creation). Where the model claims nothing, it
// returns ErrDeclined with the summary.
func (t *Team) Scores() (str, summary string, err error) {
	t.mu.Lock()
	ready := t.tr != nil || t.link != nil
	t.mu.Unlock()
	if !ready {
		return "", "", Invalid("team is not connected")
	}
	str, summary = t.scores()
	if str == "" && !t.ctx.opts.fixedScores {
		return "", summary, ErrDeclined
	}
	return str, summary, nil
}

// deviceName is the driver's name of a GPU this process sees (a variable
// so that tests may name one where there is none).
var deviceName = cuda.DeviceName

// ErrDeclined is Scores' verdict where the model claims nothing on a team:
// goring has nothing to offer it (GORING_ERR_DECLINED). Being one more
// layer of a team still costs every communicator (UCC creates, scores,
// merges and destroys a goring team), so the shim then gives UCC no score
// and makes no team of the same members again
// (cshim/tl_goring_idle.h).
var ErrDeclined = errors.New("goring's model claims nothing on this team")

// scores is the model's score string for t and its summary line, or
// nothing when the context's scores are fixed.
func (t *Team) scores() (string, string) {
	if t.ctx.opts.fixedScores {
		return "", "scores=fixed: the default score everywhere"
	}
	s := t.shape()
	ks := s
	ks.Cal = nil // the file's name stands for it: the cache keeps no context's calibration alive
	node, shared := t.nodeCapable() && s.GPUs >= t.size, t.leaderCapable()
	k := scoreKey{t.ctx.algKey, ks, strings.Join(t.layers, ","), t.ctx.opts.claims, node, shared}
	scoreCache.Lock()
	defer scoreCache.Unlock()
	if v, ok := scoreCache.m[k]; ok {
		return v[0], v[1]
	}
	str, _, summary := tune.Claims(s, t.teamAlg)
	// Measured claims, applied by the shim after the model's, where a
	// table of the team's shape can fit: a GPU a rank on a host of as
	// many GPUs (s.GPUs, hostGPUs), or every rank on one. Fewer GPUs than
	// ranks, but more than one, is neither: ranks share some GPUs, the
	// node kernels turn off at the first call (nodeexec.Agree), and the
	// calls run as messages that no table measured.
	if node || shared {
		if gpu, err := deviceName(0); err == nil {
			str, summary, _ = tune.WithNodeClaims(str, summary, gpu, t.size, shared, t.layers, t.ctx.claims, t.ctx.opts.claims)
		}
	}
	if scoreCache.m == nil {
		scoreCache.m = map[scoreKey][2]string{}
	}
	scoreCache.m[k] = [2]string{str, summary}
	return str, summary
}
