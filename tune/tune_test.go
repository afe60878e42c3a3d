package tune

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
)

// UCC v1.8.0's tl/ucp selection strings, read as goring schedules.
func TestUCPAlgorithm(t *testing.T) {
	for _, c := range []struct {
		coll  coll.Collective
		bytes int64
		procs int
		want  string
	}{
		{coll.Allreduce, 4, 4, "recursive_doubling"},
		{coll.Allreduce, 4 << 10, 4, "recursive_doubling"},
		{coll.Allreduce, 4<<10 + 4, 4, "rabenseifner"},
		{coll.Allgather, 1 << 10, 4, "recursive_doubling"}, // 4 KiB in all
		{coll.Allgather, 2 << 10, 4, "neighbor"},           // 8 KiB in all
		{coll.Allgather, 1 << 10, 3, "bruck"},
		{coll.Allgather, 1 << 20, 3, "ring"},
		{coll.ReduceScatter, 1 << 20, 4, "ring"},
		{coll.Bcast, 1 << 20, 4, "knomial"},
	} {
		got, err := UCPAlgorithm(c.coll, c.bytes, c.procs)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%s %d B on %d", c.coll, c.bytes, c.procs)
	}
	_, err := UCPAlgorithm(coll.Alltoallv, 4, 4)
	assert.Error(t, err, "alltoallv has no model")
}

func TestRanges(t *testing.T) {
	pts := []Point{{Bytes: 4, Claimed: true}, {Bytes: 8, Claimed: true}, {Bytes: 16}, {Bytes: 32, Claimed: true}, {Bytes: 64, Claimed: true}}
	assert.Equal(t, []Range{{0, 16}, {32, 0}}, Ranges(pts))
	assert.Empty(t, Ranges([]Point{{Bytes: 4}, {Bytes: 8}}))
	assert.Equal(t, []Range{{8, 16}}, Ranges([]Point{{Bytes: 4}, {Bytes: 8, Claimed: true}, {Bytes: 16}}))
}

func TestTuneString(t *testing.T) {
	s, err := TuneString(coll.Allgather, "cuda", 4, []Range{{0, 1024}, {4096, 0}}, 11)
	require.NoError(t, err)
	assert.Equal(t, "allgather:cuda:0-4095:11#allgather:cuda:16384-inf:11", s, "UCC counts allgather's whole result")
	s, err = TuneString(coll.Allreduce, "host", 4, []Range{{64, 128}}, 11)
	require.NoError(t, err)
	assert.Equal(t, "allreduce:host:64-127:11", s)
	s, err = TuneString(coll.Allreduce, "host", 4, nil, 11)
	require.NoError(t, err)
	assert.Empty(t, s)
	// UCC takes a range's upper end too: a range of one byte cannot be
	// written without claiming the byte after it, and is left out.
	s, err = TuneString(coll.Allreduce, "host", 4, []Range{{4, 5}, {8, 16}}, 11)
	require.NoError(t, err)
	assert.Equal(t, "allreduce:host:8-15:11", s)
	_, err = TuneString(coll.Allreduce, "host", 4, nil, -1)
	assert.Error(t, err)
}

// defaultChooser is the team layer's choice (choose.Auto) for a team of
// procs ranks on one host: on device memory with the push engine, or on
// host memory.
func defaultChooser(host bool, procs int) Chooser {
	return teamChooser(host, choose.Shape{Size: procs, Push: !host})
}

// teamChooser is the team layer's choice for a team of shape s.
func teamChooser(host bool, s choose.Shape) Chooser {
	return func(c coll.Collective, b int64) (string, string) {
		s.Coll, s.Bytes, s.Host = c, b, host
		ch, err := choose.Auto(s, nil)
		if err != nil {
			return "", ""
		}
		return ch.Alg, ch.Fallback
	}
}

// The one-GPU regime against what UCC measured through both layers, four
// processes on one H100 (docs/log/gpu-runs.md "goring's own CUDA IPC push
// (2026-11-25, one H100)" and "One GPU, four processes, through UCC after
// the C path (2026-11-25 night, one H100)", ucc_perftest -m cuda): allgather tl/ucp / tl/goring 2.47-2.69x
// at 4 MiB per rank, 1.81-1.83x at 64 MiB, 1.34x at 256 MiB. The model
// must claim all of them and put each ratio within 25%.
func TestSharedGPUAgainstMeasured(t *testing.T) {
	r, err := SharedGPU(4, direct.Model{})
	require.NoError(t, err)
	sizes := []int64{4 << 20, 64 << 20, 256 << 20}
	pts, err := Compare(r, coll.Allgather, 4, sizes, defaultChooser(false, 4))
	require.NoError(t, err)
	for i, measured := range []float64{2.58, 1.82, 1.34} {
		p := pts[i]
		require.Empty(t, p.Why)
		assert.True(t, p.Claimed, "%d B: goring %.0f us, tl/ucp %.0f us", p.Bytes, p.GoringUS, p.UCPUS)
		assert.InEpsilon(t, measured, p.UCPUS/p.GoringUS, 0.25, "%d B: predicted %.2f, measured %.2f", p.Bytes, p.UCPUS/p.GoringUS, measured)
	}
}

// The leader algorithms on one GPU shared by four processes, priced as one
// context's work (OneDevice, H100 figures), against the H200 measurement
// through UCC (docs/gpu.md "One process drives a shared GPU", tl/ucp /
// tl/goring at 4, 64 and 256 MiB per rank): every size claimed, and each
// predicted advantage below the measured one but within 30% of it, so
// the model errs towards leaving a size to tl/ucp.
func TestSharedGPULeaderAgainstMeasured(t *testing.T) {
	r, err := SharedGPU(4, direct.Model{})
	require.NoError(t, err)
	chooser := teamChooser(false, choose.Shape{Size: 4, Push: true, SharedGPU: true})
	sizes := []int64{4 << 20, 64 << 20, 256 << 20}
	for c, measured := range map[coll.Collective][]float64{
		coll.Allgather: {20.83, 4.80, 2.25},
		coll.Allreduce: {60.55, 15.85, 6.52},
	} {
		pts, err := Compare(r, c, 4, sizes, chooser)
		require.NoError(t, err)
		for i, p := range pts {
			require.Empty(t, p.Why)
			assert.Equal(t, "leader", p.GoringAlg)
			assert.True(t, p.Claimed, "%s %d B", c, p.Bytes)
			ratio := p.UCPUS / p.GoringUS
			assert.LessOrEqual(t, ratio, measured[i], "%s %d B: predicted %.2f, measured %.2f", c, p.Bytes, ratio, measured[i])
			assert.GreaterOrEqual(t, ratio, 0.7*measured[i], "%s %d B: predicted %.2f, measured %.2f", c, p.Bytes, ratio, measured[i])
		}
	}
}

// On host memory both layers move the same bytes through the same UCX;
// goring's default algorithms are tl/ucp's own or slower ones (ring where
// tl/ucp exchanges with neighbours), and its calls cost more. So the
// model claims no host size: the measured wins of goring there (docs/ucc.md
// "Small collectives in C", 2 ranks) are not ones it can explain.
func TestHostClaimsNothing(t *testing.T) {
	for _, procs := range []int{2, 3, 4, 8} {
		r, err := Host(procs, 64<<10)
		require.NoError(t, err)
		for _, c := range []coll.Collective{coll.Allreduce, coll.Allgather, coll.ReduceScatter, coll.Bcast} {
			pts, err := Compare(r, c, 4, Sizes(), defaultChooser(true, procs))
			require.NoError(t, err)
			assert.Empty(t, Ranges(pts), "%s on %d processes", c, procs)
		}
	}
}

// A faster layer is claimed and a slower one is not: the comparison is
// the layers', not the algorithms'.
func TestCompareFollowsLayerCosts(t *testing.T) {
	r, err := Host(4, 0)
	require.NoError(t, err)
	same := func(c coll.Collective, b int64) (string, string) {
		a, _ := UCPAlgorithm(c, b, 4)
		return a, ""
	}
	r.GoringLarge = Layer{Name: "fast", CallUS: 0, MessageUS: 0.05}
	pts, err := Compare(r, coll.Allreduce, 4, []int64{4, 1 << 10}, same)
	require.NoError(t, err)
	assert.True(t, pts[0].Claimed && pts[1].Claimed, "%+v", pts)
	r.GoringLarge = Layer{Name: "slow", CallUS: 5, MessageUS: 0.25}
	pts, err = Compare(r, coll.Allreduce, 4, []int64{4, 1 << 10}, same)
	require.NoError(t, err)
	assert.False(t, pts[0].Claimed || pts[1].Claimed, "%+v", pts)
	r.GoringLarge = Layer{Name: "bad", CallUS: -1}
	pts, err = Compare(r, coll.Allreduce, 4, []int64{4}, same)
	require.NoError(t, err)
	assert.Contains(t, pts[0].Why, "not negative")
	assert.False(t, pts[0].Claimed)
}

// A choice goring cannot run on the team falls back; with no fallback the
// size is not claimed and says why.
func TestCompareFallback(t *testing.T) {
	r, err := SharedGPU(3, direct.Model{})
	require.NoError(t, err)
	pts, err := Compare(r, coll.Allgather, 4, []int64{1 << 20}, func(coll.Collective, int64) (string, string) { return "neighbor", "multiwrite" })
	require.NoError(t, err)
	assert.Equal(t, "multiwrite", pts[0].GoringAlg, "neighbor exchange needs an even rank count")
	assert.True(t, pts[0].Claimed)
	pts, err = Compare(r, coll.Allgather, 4, []int64{1 << 20}, func(coll.Collective, int64) (string, string) { return "neighbor", "" })
	require.NoError(t, err)
	assert.False(t, pts[0].Claimed)
	assert.Contains(t, pts[0].Why, "goring:")
}

// With a calibration the GPU regime's links carry the measured push (the
// engine calibration of two H100, calib/testdata), goring adds nothing
// per message and tl/ucp its rendezvous beyond the push: goring is
// claimed where it was measured faster (allgather 1.39-3.30x tl/ucp at
// 4-256 MiB on two H100, docs/log/gpu-runs.md "The users' own path on two
// GPUs"),
// and the calibration must be of the team's machine.
func TestCalibratedGPUs(t *testing.T) {
	f, err := os.Open("../calib/testdata/calibration_h100x2_engine.json")
	require.NoError(t, err)
	defer f.Close()
	cal, err := calib.Load(f)
	require.NoError(t, err)
	r, err := GPUs(2)
	require.NoError(t, err)
	cr, notes, err := r.Calibrated(cal, "NVIDIA H100 80GB HBM3")
	require.NoError(t, err)
	assert.NotEmpty(t, notes)
	assert.Zero(t, cr.Goring.MessageUS)
	assert.EqualValues(t, CUDAUCPOverPushUS, cr.UCP.MessageUS)
	pts, err := Compare(cr, coll.Allgather, 4, []int64{4 << 20, 64 << 20}, defaultChooser(false, 2))
	require.NoError(t, err)
	for _, p := range pts {
		assert.True(t, p.Claimed, "%d B: goring %.0f us, tl/ucp %.0f us", p.Bytes, p.GoringUS, p.UCPUS)
	}
	_, _, err = r.Calibrated(cal, "NVIDIA H200")
	assert.Error(t, err, "another GPU model")
	r4, err := GPUs(4)
	require.NoError(t, err)
	_, _, err = r4.Calibrated(cal, "NVIDIA H100 80GB HBM3")
	assert.Error(t, err, "another GPU count")
}

// The GPU regime (the synthetic H100 node, no calibration) against UCC's
// measurement on two H200 through both layers (docs/gpu.md "goring chosen
// by its own scores", ucc_perftest -m cuda, tl/ucp ÷ goring): allgather
// 2.90 / 1.44 / 1.34 and allreduce 5.56 / 2.28 / 1.63 at 4 / 64 / 256 MiB
// per rank. The model predicts a smaller advantage than measured, never a
// larger one: where it errs, it leaves a size to tl/ucp rather than take
// one goring loses. It claims all but the 256 MiB allgather, which it
// predicts 1.04x, inside the margin (measured 1.34x).
func TestGPUsConservativeAgainstMeasured(t *testing.T) {
	r, err := GPUs(2)
	require.NoError(t, err)
	sizes := []int64{4 << 20, 64 << 20, 256 << 20}
	for c, measured := range map[coll.Collective][]float64{
		coll.Allgather: {2.90, 1.44, 1.34},
		coll.Allreduce: {5.56, 2.28, 1.63},
	} {
		pts, err := Compare(r, c, 4, sizes, defaultChooser(false, 2))
		require.NoError(t, err)
		for i, p := range pts {
			require.Empty(t, p.Why)
			ratio := p.UCPUS / p.GoringUS
			claim := !(c == coll.Allgather && p.Bytes == 256<<20)
			assert.Equal(t, claim, p.Claimed, "%s %d B: predicted %.2f", c, p.Bytes, ratio)
			assert.LessOrEqual(t, ratio, measured[i], "%s %d B: predicted %.2f, measured %.2f", c, p.Bytes, ratio, measured[i])
		}
	}
}
