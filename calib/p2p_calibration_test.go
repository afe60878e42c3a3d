package calib

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/topo"
)

// h100x2Fits are the figures goring bench p2p fitted between two processes
// on the 2xH100 machine (2xH100, 2026-11-25, docs/gpu.md "One transfer on
// two H100s"), with gamma as given.
func h100x2Fits(gamma float64) P2PFits {
	return P2PFits{
		Direct: model.Fit{AlphaUS: 37.37, BetaGBps: 383.4}, D2H: model.Fit{AlphaUS: 5.33, BetaGBps: 55.38},
		H2D: model.Fit{AlphaUS: 5.0, BetaGBps: 54.91}, DirectSlowdown: gamma,
		Together: []P2PSample{{Bytes: 64 << 20, HostPct: 2, TimeUS: 244.1}, {Bytes: 256 << 20, HostPct: 10, TimeUS: 1249.8}},
	}
}

// The document bench p2p writes is a valid calibration of the machine it
// ran on, and the planner reading it decides as bench p2p's own model did:
// with the measured contention every size stays on the direct path (the
// best static split was 0-1% there); without it the same paths would be
// split, so the contention entry is what keeps collectives direct.
func TestP2PCalibrationKeepsTheEngineDirect(t *testing.T) {
	tp, err := topo.Preset("h100x2")
	require.NoError(t, err)
	node := &tp.Nodes[0]
	split := func(gamma float64, n int64) model.Split {
		doc, err := P2PCalibration(h100x2Fits(gamma), 0, 1, 2, "NVIDIA H100 80GB HBM3", "vm", time.Now()).Encode()
		require.NoError(t, err)
		cal, err := Parse(doc)
		require.NoError(t, err)
		require.NoError(t, cal.CheckNode(node))
		require.True(t, cal.Measured(0, 1))
		require.Len(t, cal.Contention, 1)
		assert.InDelta(t, gamma/(1+gamma), cal.Contention[0].DirectSlowdown, 1e-12, "bench p2p's gamma slows the direct beta to beta/(1+gamma)")
		sp, err := NewSplitter(node, cal, model.DefaultOptions())
		require.NoError(t, err)
		s, err := sp.Split(0, 1, n, model.AllPaths, false)
		require.NoError(t, err)
		return s
	}
	for _, n := range []int64{8 << 20, 64 << 20, 256 << 20, 1 << 30} {
		s := split(0.42, n)
		assert.True(t, s.DirectOnly, "%d bytes with gamma 0.42: %+v", n, s.Paths)
	}
	free := split(0, 256<<20)
	assert.False(t, free.DirectOnly, "without contention the model splits a 256 MiB transfer: the test would not see a planner that ignores the entry")
}
