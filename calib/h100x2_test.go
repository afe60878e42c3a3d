package calib

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/model"
)

// The two calibrations of the 2xH100 machine (docs/gpu.md "Collectives
// with a calibration"),
// as the device wrote them:
//   - calibration_h100x2_calibrate.json, goring calibrate: one process, one
//     stream per path; a 2.5 us direct startup and a host path that barely
//     slows the direct copy (direct_slowdown 0.002);
//   - calibration_h100x2_engine.json, goring bench p2p --calibration-out:
//     the push engine between two processes; 28 us startup and the direct
//     copy losing a third of its bandwidth while the host path runs.
//
// Collectives given the first split their large transfers and ran up to
// 1.2x slower; given the second they ran as without a file. The splitter
// must make those two decisions from the files.
func TestH100x2Calibrations(t *testing.T) {
	node := presetNode(t, "h100x2")
	split := func(file string, n int64) model.Split {
		f, err := os.Open(file)
		require.NoError(t, err)
		defer f.Close()
		cal, err := Load(f)
		require.NoError(t, err)
		require.NoError(t, cal.CheckNode(node))
		sp, err := NewSplitter(node, cal, model.DefaultOptions())
		require.NoError(t, err)
		s, err := sp.Split(0, 1, n, model.AllPaths, false)
		require.NoError(t, err)
		return s
	}
	for _, n := range []int64{16 << 20, 64 << 20, 256 << 20, 1 << 30} {
		assert.True(t, split("testdata/calibration_h100x2_engine.json", n).DirectOnly, "engine figures, %d bytes", n)
	}
	s := split("testdata/calibration_h100x2_calibrate.json", 256<<20)
	require.False(t, s.DirectOnly, "one-process figures split a 256 MiB transfer")
	assert.Equal(t, model.HostName, s.Paths[len(s.Paths)-1].Path.Name)
}
