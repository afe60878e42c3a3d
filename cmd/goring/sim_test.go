package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sweep"
)

func simJSON(t *testing.T, args ...string) sweep.Doc {
	t.Helper()
	out, stderr, code := runCLI(t, append([]string{"sim"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var doc sweep.Doc
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	return doc
}

func TestSimJSONListsEveryAlgorithm(t *testing.T) {
	doc := simJSON(t, "allgather", "--alg", "all", "--topo", "clusterB", "--nodes", "8", "--bytes", "64MiB", "--json")
	assert.Equal(t, "allgather", doc.Collective)
	assert.Equal(t, "clusterB", doc.Topology)
	assert.Equal(t, 32, doc.NRanks)
	got := map[string]sweep.Row{}
	for _, r := range doc.Results {
		got[r.Algorithm] = r
		assert.Equal(t, int64(64<<20), r.Bytes)
		assert.True(t, (r.PredictedUS != nil) != (r.Error != ""), "%s: either a prediction or an error", r.Algorithm)
	}
	for _, a := range sched.Algorithms(coll.Allgather) {
		r, ok := got[a.Name]
		require.True(t, ok, "algorithm %s missing", a.Name)
		require.NotNil(t, r.PredictedUS, "%s: %s", a.Name, r.Error)
		assert.Positive(t, *r.PredictedUS)
		assert.Positive(t, *r.BusBWGBps)
		assert.NotEmpty(t, r.Bottleneck)
	}
	ring := got["ring"]
	// Flat ring: 31 steps of 64 MiB, each over one 200 Gb/s rail port
	// (25 GB/s) on the hops that cross nodes: at least 31*64MiB/25GB/s.
	require.NotNil(t, ring.PredictedUS)
	assert.Greater(t, *ring.PredictedUS, 31*float64(64<<20)/25e3)
	// busbw as nccl-tests: algbw*(P-1)/P with algbw = bytes*P/t.
	assert.InEpsilon(t, float64(64<<20)*31/(*ring.PredictedUS*1e3), *ring.BusBWGBps, 1e-9)
	pr, ok := got["parallel_rings"]
	require.True(t, ok, "sim --alg all printed no parallel_rings row")
	require.NotNil(t, pr.PredictedUS, pr.Error)
	assert.Less(t, *pr.PredictedUS, 0.4**ring.PredictedUS, "parallel_rings at least 60%% faster than ring (Parallel Rings on clusterB)")
}

func TestSimTableAndAuto(t *testing.T) {
	out, stderr, code := runCLI(t, "sim", "allgather", "--alg", "ring", "--topo", "clusterB", "--nodes", "2", "--bytes", "1M:4M")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2+3)
	assert.True(t, strings.HasPrefix(lines[1], "# Size"))
	assert.Contains(t, lines[1], "ring(us)")
	assert.True(t, strings.HasPrefix(lines[2], "1048576 "))

	all := simJSON(t, "allgather", "--alg", "all", "--topo", "clusterB", "--nodes", "2", "--bytes", "4KiB:4MiB", "--json")
	auto := simJSON(t, "allgather", "--alg", "auto", "--topo", "clusterB", "--nodes", "2", "--bytes", "4KiB:4MiB", "--json")
	best := map[int64]float64{}
	for _, r := range all.Results {
		if r.PredictedUS != nil && (best[r.Bytes] == 0 || *r.PredictedUS < best[r.Bytes]) {
			best[r.Bytes] = *r.PredictedUS
		}
	}
	require.Len(t, auto.Results, len(best))
	for i, r := range auto.Results {
		require.NotNil(t, r.PredictedUS, "case %d: %s", i, r.Error)
		assert.Equal(t, "auto", r.Algorithm)
		assert.NotEmpty(t, r.Chosen)
		// Sizes are powers of two, where the cost table is exact.
		assert.InEpsilon(t, best[r.Bytes], *r.PredictedUS, 1e-9, "case %d: auto picks the fastest at %d", i, r.Bytes)
	}
}

// The table's columns line up, OSU-style, whatever the algorithms'
// names: the header and every row end at the same column, so each column
// is as wide as its longest label ("recursive_doubling(us)", or
// "recursive_doubling/L2(us)" with --lanes) or its numbers.
func TestSimTableAligned(t *testing.T) {
	for _, extra := range [][]string{nil, {"--lanes", "1,2"}, {"--rank-avg"}} {
		args := append([]string{"sim", "allgather", "--alg", "all", "--topo", "clusterB", "--nodes", "2", "--bytes", "4,4MiB", "--no-progress"}, extra...)
		out, stderr, code := runCLI(t, args...)
		require.Equal(t, 0, code, stderr)
		var header string
		rows := 0
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			switch {
			case strings.HasPrefix(l, "# Size"):
				header = l
			case header != "" && !strings.HasPrefix(l, "#"):
				rows++
				assert.Len(t, l, len(header), "%v: row %q under\n%q", extra, l, header)
			}
		}
		assert.Contains(t, header, "recursive_doubling", "%v", extra)
		assert.Equal(t, 2, rows, "%v", extra)
	}
}

// The progress bar is for a terminal: where stderr is a file or a pipe
// (a log, a test) it stays empty, as bench's progress line does.
func TestSimNoProgressOffTerminal(t *testing.T) {
	for _, alg := range []string{"all", "auto"} {
		out, stderr, code := runCLI(t, "sim", "allgather", "--alg", alg, "--topo", "clusterB", "--nodes", "2", "--bytes", "4:4MiB")
		require.Equal(t, 0, code, stderr)
		assert.Empty(t, stderr, "--alg %s", alg)
		assert.Contains(t, out, "# Size")
	}
}

func TestSimPNG(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{
		{"--alg", "all", "--bytes", "1M:8M", "--png", filepath.Join(dir, "lat.png")},
		{"--alg", "ring", "--bytes", "1M", "--gantt", "--png", filepath.Join(dir, "gantt.png")},
	} {
		out, stderr, code := runCLI(t, append([]string{"sim", "allgather", "--topo", "clusterA", "--nodes", "2"}, args...)...)
		require.Equal(t, 0, code, "case %d: %s", i, stderr)
		assert.Contains(t, out, "wrote ")
		b, err := os.ReadFile(args[len(args)-1])
		require.NoError(t, err)
		assert.Equal(t, "\x89PNG", string(b[:4]), "case %d", i)
	}
}

func TestSimBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		/*0*/ {[]string{"sim", "allgatherx", "--topo", "clusterB", "--bytes", "1M"}, "unknown collective"},
		/*1*/ {[]string{"sim", "allgather", "--topo", "clusterB"}, "--bytes is required"},
		/*2*/ {[]string{"sim", "allgather", "--topo", "clusterB", "--bytes", "1M", "--alg", "nope"}, "nope"},
		/*3*/ {[]string{"sim", "allgather", "--topo", "nosuch", "--bytes", "1M"}, "unknown topology preset"},
		/*4*/ {[]string{"sim", "allgather", "--topo", "clusterB", "--bytes", "0"}, "positive"},
		/*5*/ {[]string{"sim", "allgather", "--topo", "clusterB", "--bytes", "1M", "--gantt"}, "--png"},
		/*6*/ {[]string{"sim", "allgather", "--topo", "clusterB", "--bytes", "1M:2M", "--alg", "ring", "--gantt", "--png", "x.png"}, "one run"},
		/*7*/ {[]string{"sim", "allreduce", "--topo", "clusterB", "--bytes", "6", "--json"}, "whole number"},
	}
	for i, c := range cases {
		out, stderr, code := runCLI(t, c.args...)
		assert.NotEqual(t, 0, code, "case %d", i)
		assert.Empty(t, out, "case %d", i)
		assert.Contains(t, stderr, c.want, "case %d", i)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "case %d: one line: %q", i, stderr)
	}
}

func TestSimListsUnsupportedWithError(t *testing.T) {
	doc := simJSON(t, "allgather", "--alg", "all", "--topo", "clusterB", "--nodes", "3", "--bytes", "1MiB", "--json")
	require.Len(t, doc.Results, len(sched.Algorithms(coll.Allgather)))
	for i, r := range doc.Results {
		if r.Algorithm == "recursive_doubling" {
			assert.Nil(t, r.PredictedUS, "case %d", i)
			assert.Contains(t, r.Error, "power-of-two", "case %d", i)
			continue
		}
		assert.NotNil(t, r.PredictedUS, "case %d %s: %s", i, r.Algorithm, r.Error)
	}
	auto := simJSON(t, "allgather", "--alg", "auto", "--topo", "clusterB", "--nodes", "3", "--bytes", "1MiB", "--json")
	require.Len(t, auto.Results, 1)
	assert.NotEqual(t, "recursive_doubling", auto.Results[0].Chosen)
	assert.NotNil(t, auto.Results[0].PredictedUS)
}

// alltoallv traffic flags reach the simulator as they reach plan and
// bench: a hot destination makes the pairwise exchange slower than uniform
// traffic of the same --bytes, and the flags are refused elsewhere.
func TestSimAlltoallvTraffic(t *testing.T) {
	simUS := func(args ...string) float64 {
		t.Helper()
		out, errOut, code := runCLI(t, append([]string{"sim", "alltoallv", "--alg", "pairwise", "--topo", "clusterB", "--nodes", "2", "--bytes", "16MiB", "--json", "--no-progress"}, args...)...)
		require.Equal(t, 0, code, errOut)
		var doc sweep.Doc
		require.NoError(t, json.Unmarshal([]byte(out), &doc))
		require.Len(t, doc.Results, 1)
		require.NotNil(t, doc.Results[0].PredictedUS, doc.Results[0].Error)
		return *doc.Results[0].PredictedUS
	}
	uniform, hot := simUS(), simUS("--hot", "0:0.9")
	assert.Greater(t, hot, 1.5*uniform, "90%% of all traffic into rank 0 must take longer than uniform traffic")
	seeded := simUS("--seed", "0")
	assert.Positive(t, seeded)
	for i, args := range [][]string{
		{"sim", "allgather", "--topo", "clusterB", "--bytes", "1MiB", "--hot", "0:0.5"},
		{"sim", "alltoallv", "--topo", "clusterB", "--bytes", "1MiB", "--hot", "0:0.5", "--seed", "3"},
		{"sim", "alltoallv", "--topo", "clusterB", "--bytes", "1MiB", "--hot", "9:0.5"},
	} {
		_, errOut, code := runCLI(t, args...)
		assert.NotZero(t, code, "case %d", i)
		assert.NotEmpty(t, errOut, "case %d", i)
	}
}

// Random alltoallv counts: the bus bandwidth counts the bytes the run's own
// matrix moves off the diagonal, not a uniform matrix's.
func TestSimAlltoallvBusBandwidthFollowsMatrix(t *testing.T) {
	stdout, stderr, code := runCLI(t, "sim", "alltoallv", "--alg", "pairwise", "--topo", "clusterB", "--bytes", "1MiB", "--seed", "7", "--json", "--no-progress")
	require.Equal(t, 0, code, stderr)
	var doc sweep.Doc
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	require.Len(t, doc.Results, 1)
	r := doc.Results[0]
	require.NotNil(t, r.PredictedUS)
	require.NotNil(t, r.BusBWGBps)
	m := bench.RandomCounts(doc.NRanks, 1<<20, 7)
	moved, err := coll.BusBytes(coll.Alltoallv, doc.NRanks, 1<<20, m)
	require.NoError(t, err)
	uniform, err := coll.BusBytes(coll.Alltoallv, doc.NRanks, 1<<20, nil)
	require.NoError(t, err)
	require.Greater(t, math.Abs(uniform-moved)/moved, 0.01, "the random matrix moves other bytes than the uniform one")
	// The CLI rounds counts to whole elements: equal within that.
	assert.InEpsilon(t, moved/(*r.PredictedUS*1e3), *r.BusBWGBps, 1e-4)
}

// goring sim --calibration: the measured links replace the preset's. On
// h200x2 the preset's NVLink line rate predicts a 2-GPU allgather at 477
// GB/s; a calibration measuring 393 GB/s brings the prediction to what the
// copy engines deliver. GPUs the topology lacks are an error.
func TestSimCalibration(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string { return writeTestFile(t, dir, name, doc) }
	good := write("cal.json", `{"schema":"goring.calibration/v1","host":"h","date":"d","ucx_tls":"sm","paths":[
		{"path":"direct","from":"GPU 0","to":"GPU 1","alpha_us":2.5,"beta_GBps":393,"samples":[]},
		{"path":"host","from":"GPU 0","to":"GPU 1","alpha_us":102,"beta_GBps":50,"samples":[]}],"skipped":[]}`)
	busbw := func(extra ...string) (float64, []string) {
		args := append([]string{"sim", "allgather", "--topo", "h200x2", "--alg", "ring", "--bytes", "256MiB", "--json", "--no-progress"}, extra...)
		stdout, stderr, code := runCLI(t, args...)
		require.Equal(t, 0, code, stderr)
		var doc sweep.Doc
		require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
		require.Len(t, doc.Results, 1)
		require.NotNil(t, doc.Results[0].BusBWGBps)
		return *doc.Results[0].BusBWGBps, doc.Calibration
	}
	nominal, notes := busbw()
	assert.Empty(t, notes)
	assert.Greater(t, nominal, 450.0, "the preset's NVLink line rate")
	measured, notes := busbw("--calibration", good)
	assert.Len(t, notes, 2, "both measured paths reported")
	assert.InDelta(t, 393, measured, 5, "the measured direct path sets the prediction")
	bad := write("bad.json", `{"schema":"goring.calibration/v1","paths":[{"path":"direct","from":"GPU 0","to":"GPU 5","alpha_us":1,"beta_GBps":300}]}`)
	_, stderr, code := runCLI(t, "sim", "allgather", "--topo", "h200x2", "--alg", "ring", "--bytes", "1MiB", "--calibration", bad)
	assert.NotZero(t, code)
	assert.Contains(t, stderr, `calibration path direct GPU 0 -> GPU 5: node "node0" has 2 GPUs (0..1)`)
	_, stderr, code = runCLI(t, "sim", "allgather", "--topo", "h200x2", "--alg", "ring", "--bytes", "1MiB", "--calibration", filepath.Join(dir, "none.json"))
	assert.NotZero(t, code)
	assert.Contains(t, stderr, "--calibration")
}

// With calibrate's 2xH200 file (calib/testdata) the ring allgather's
// prediction at 256 MiB is the measured copy rate, and the notes say which
// links took which figures.
func TestSimCalibrationFixture(t *testing.T) {
	args := []string{"allgather", "--alg", "ring", "--topo", "h200x2", "--bytes", "256MiB", "--json", "--no-progress"}
	cal := simJSON(t, append(args, "--calibration", calibrationFixture)...)
	require.Len(t, cal.Results, 1)
	require.NotNil(t, cal.Results[0].BusBWGBps)
	assert.InDelta(t, 385, *cal.Results[0].BusBWGBps, 5, "measured: 390 GB/s peer copies with a 10 us startup")
	require.Len(t, cal.Calibration, 2)
	assert.Contains(t, cal.Calibration[0], "nvlink gpu:0-gpu:1 x18 478.08 -> 390.00 GB/s, startup 1.50 -> 10.00 us")
	assert.Contains(t, cal.Calibration[1], "pcie gpu:0-host:0 x1 50.00 -> 51.00 GB/s; pcie gpu:1-host:0 x1 50.00 -> 51.00 GB/s")

	out, stderr, code := runCLI(t, "sim", "allgather", "--alg", "ring", "--topo", "h200x2", "--bytes", "256MiB", "--calibration", calibrationFixture)
	require.Zero(t, code, stderr)
	assert.Contains(t, out, "# calibration: direct GPU 0 -> GPU 1 measured 390.00 GB/s, 10.00 us: nvlink gpu:0-gpu:1 x18 478.08 -> 390.00 GB/s")
}

func TestSimCalibrationBadInput(t *testing.T) {
	hostOnly := filepath.Join(t.TempDir(), "host-only.json")
	doc, err := os.ReadFile("../../calib/testdata/calibration_v1_host_only.golden.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(hostOnly, doc, 0o644))
	cases := append(badCalibrationFiles(t), struct{ file, topo, want string }{hostOnly, "h200x2", "calibration measured no GPU path"})
	for i, c := range cases {
		out, stderr, code := runCLI(t, "sim", "allgather", "--alg", "ring", "--topo", c.topo, "--bytes", "1MiB", "--calibration", c.file)
		assert.NotZero(t, code, "case %d", i)
		assert.Empty(t, out, "case %d", i)
		assert.Contains(t, stderr, c.want, "case %d", i)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "case %d: one line: %q", i, stderr)
	}
}

// alltoallv sizes whose rows wrap an int64 are refused with a message:
// uniform counts panicked in the generator, --seed in the random draw,
// and --hot said a count was negative.
func TestSimAlltoallvHugeSizesRefused(t *testing.T) {
	for _, extra := range [][]string{nil, {"--seed", "1"}, {"--hot", "0:0.5"}, {"--alg", "nimble"}} {
		for _, b := range []string{"2305843009213693952", "4611686018427387904"} {
			args := append([]string{"sim", "alltoallv", "--alg", "pairwise", "--topo", "clusterB", "--bytes", b, "--no-progress"}, extra...)
			_, errOut, code := runCLI(t, args...)
			assert.NotZero(t, code, "%v", args)
			assert.Regexp(t, `pass 4611686018427387904 bytes|more than 4611686018427387904 bytes`, errOut, "%v", args)
			assert.NotContains(t, errOut, "negative", "%v", args)
		}
	}
}
