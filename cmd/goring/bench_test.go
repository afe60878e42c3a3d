package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// envRunCLI makes the test binary behave as the goring binary, for tests
// that need a separate process (killing ranks, mpirun).
const envRunCLI = "GORING_TEST_RUN_CLI"

// TestMain lets the test binary stand in for goring: bench's launcher
// re-executes os.Executable() as every rank, and here that is this binary.
func TestMain(m *testing.M) {
	if launch.IsRank() || os.Getenv(envRunCLI) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func needUCX(t *testing.T) {
	t.Helper()
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
}

func TestBenchBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "allgatherx", "--np", "2"}, "unknown collective"},
		{[]string{"bench", "allgather", "--np", "2", "--alg", "nope"}, "unknown allgather algorithm"},
		{[]string{"bench", "allreduce", "--np", "2", "--bytes", "6", "--dtype", "float32"}, "not a multiple of the 4-byte float32"},
		{[]string{"bench", "allreduce", "--np", "2", "--bytes", "4:10"}, "not a multiple"},
		{[]string{"bench", "allgather", "--np", "3", "--topo", "clusterB"}, "--np 3 does not match topology clusterB with 4 GPUs"},
		{[]string{"bench", "allgather", "--np", "5", "--nodes", "2"}, "does not split into --nodes 2"},
		{[]string{"bench", "allgather"}, "--np is required"},
		// Refused before anything is built: an emulated node of 100000
		// GPUs alone would take the machine's memory.
		{[]string{"bench", "allgather", "--np", "100000", "--bytes", "1Q"}, "--np 100000: at most 256"},
		{[]string{"bench", "allgather", "--np", "100000", "--nodes", "1000"}, "--np 100000: at most 256"},
		{[]string{"bench", "allgather", "--np", "2", "--bytes", "1Q"}, "--bytes"},
		{[]string{"bench", "allreduce", "--np", "2", "--dtype", "float32", "--op", "band"}, "not defined"},
		{[]string{"bench", "allgather", "--np", "2", "--json", "--csv"}, "exclude"},
		{[]string{"bench", "allgather", "--np", "2", "--warmup", "-5"}, "--warmup -5: want 0 or more"},
		{[]string{"bench", "allgather", "--np", "2", "--timeout", "-1s"}, "--timeout -1s: want a positive duration"},
		{[]string{"bench", "dispatch", "--np", "2", "--warmup", "-2"}, "--warmup -2: want 0 or more"},
		{[]string{"bench", "alltoallv", "--np", "2", "--hot", "5:0.5"}, "out of range"},
		{[]string{"bench", "alltoallv", "--np", "2", "--counts", "/nonexistent/counts.json"}, "--counts"},
		{[]string{"bench", "allgather", "--np", "2", "--hot", "0:0.5"}, "alltoallv only"},
		{[]string{"bench", "bcast", "--np", "2", "--root", "2"}, "--root 2"},
		{[]string{"bench", "allgather", "--np", "2", "--straggler", "x"}, "--straggler"},
		{[]string{"bench", "allgather", "--np", "2", "--mem", "rocm"}, "--mem \"rocm\": want host or cuda"},
		{[]string{"bench", "allgather", "--np", "2", "--mem", "cuda:1"}, "--mem \"cuda:1\""},
		{[]string{"bench", "allgather", "--np", "2", "--mem", "cuda:0"}, "--mem \"cuda:0\": want host or cuda"},
		{[]string{"bench", "allgather", "--np", "2", "--gpus", "2"}, "--gpus 2 needs --mem cuda"},
		{[]string{"bench", "p2p"}, "bench p2p measures GPU paths: it needs --mem cuda"},
		{[]string{"bench", "p2p", "--mem", "cuda", "--np", "3"}, "bench p2p runs 2 processes"},
	}
	for i, c := range cases {
		stdout, stderr, code := runCLI(t, c.args...)
		assert.NotZero(t, code, "case %d", i)
		assert.Empty(t, stdout, "case %d: nothing on stdout", i)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d: one line: %q", i, stderr)
		assert.True(t, strings.HasPrefix(stderr, "goring: "), "case %d: %q", i, stderr)
		assert.Contains(t, stderr, c.want, "case %d", i)
	}
}

// Without --bytes a reduction starts at one element, as OMB's reduction
// benchmarks do: the default sizes pass, so the job stops at the next
// check (the unknown algorithm), for every element size.
func TestBenchDefaultBytesFitTheElement(t *testing.T) {
	for _, c := range []string{"allreduce", "reduce_scatter"} {
		for _, dt := range []string{"int8", "bfloat16", "float32", "float64"} {
			_, stderr, code := runCLI(t, "bench", c, "--np", "2", "--dtype", dt, "--alg", "nope")
			assert.Equal(t, 1, code, "%s %s", c, dt)
			assert.Contains(t, stderr, "unknown "+c+" algorithm", "%s %s", c, dt)
		}
	}
}

// --mem cuda without a driver: one line naming the cause, exit 3 (as
// topo detect), nothing on stdout, no rank started.
func TestBenchMemCUDAWithoutDriver(t *testing.T) {
	if _, err := cuda.DeviceCount(); !cuda.IsNoDriver(err) {
		t.Skip("a CUDA driver is present; the GPU tests cover --mem cuda")
	}
	stdout, stderr, code := runCLI(t, "bench", "allgather", "--np", "2", "--mem", "cuda", "--bytes", "1KiB")
	assert.Equal(t, 3, code)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	assert.Contains(t, stderr, "--mem cuda: no CUDA driver")
	stdout, stderr, code = runCLI(t, "bench", "p2p", "--mem", "cuda", "--bytes", "1MiB")
	assert.Equal(t, 3, code, "bench p2p without a driver")
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "--mem cuda: no CUDA driver")
}

func benchJSON(t *testing.T, args ...string) []bench.Row {
	t.Helper()
	stdout, stderr, code := runCLI(t, append([]string{"bench"}, append(args, "--json")...)...)
	require.Zero(t, code, "goring %v: %s", args, stderr)
	var doc map[string][]bench.Row
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&doc), "stdout: %s", stdout)
	require.Len(t, doc, 1)
	return doc["results"]
}

func TestBenchJSONContract(t *testing.T) {
	needUCX(t)
	rows := benchJSON(t, "allgather", "--alg", "all", "--np", "4", "--nodes", "2", "--bytes", "1:4KiB", "--iters", "3", "--warmup", "1", "--validate")
	var algs []string
	for _, a := range sched.Algorithms(coll.Allgather) {
		algs = append(algs, a.Name)
	}
	seen := map[string]int{}
	for _, r := range rows {
		seen[r.Algorithm]++
		assert.Equal(t, "allgather", r.Collective)
		assert.True(t, r.Validated)
		assert.Equal(t, 3, r.Iterations)
		assert.Positive(t, r.AvgUS)
		assert.LessOrEqual(t, r.MinUS, r.AvgUS)
		assert.GreaterOrEqual(t, r.MaxUS, r.AvgUS)
		assert.Positive(t, r.BusBWGBps)
	}
	for _, a := range algs {
		assert.Equal(t, 13, seen[a], "algorithm %s: one row per size 1..4096", a)
	}
}

// sampleSizes is a spread from one element (1 byte for the byte
// collectives) up, odd element counts included (doubling alone would give
// odd counts only at its ends), in multiples of elem.
func sampleSizes(elem int64, short bool) string {
	counts := []int64{1, 2, 3, 7, 64, 255, 1024, 4099, 16384, 70001}
	if short {
		counts = []int64{1, 3, 255, 4099}
	}
	parts := make([]string, len(counts))
	for i, n := range counts {
		parts[i] = strconv.FormatInt(n*elem, 10)
	}
	return strings.Join(parts, ",")
}

// Every algorithm of every collective over real UCX processes, with
// validation of every iteration, on emulated topologies of 2 to 16 ranks.
func TestBenchAllAlgorithmsValidateOverUCX(t *testing.T) {
	needUCX(t)
	type job struct {
		c       coll.Collective
		np      int
		nodes   int
		dtype   coll.Dtype
		op      coll.Op
		extra   []string
		minSize int64
	}
	var jobs []job
	nps := []struct{ np, nodes int }{{2, 1}, {3, 1}, {4, 2}, {6, 3}, {8, 2}, {16, 4}}
	if testing.Short() {
		nps = nps[2:3]
	}
	for _, n := range nps {
		jobs = append(jobs,
			job{c: coll.Allgather, np: n.np, nodes: n.nodes},
			job{c: coll.Bcast, np: n.np, nodes: n.nodes, extra: []string{"--root", strconv.Itoa(n.np - 1)}},
			job{c: coll.Alltoallv, np: n.np, nodes: n.nodes, extra: []string{"--seed", strconv.Itoa(n.np)}},
			job{c: coll.Allreduce, np: n.np, nodes: n.nodes, dtype: coll.Float32, op: coll.Sum},
			job{c: coll.ReduceScatter, np: n.np, nodes: n.nodes, dtype: coll.Int32, op: coll.Max},
		)
	}
	// Every datatype and every op at least once, on 3 and 4 ranks.
	if !testing.Short() {
		for i, d := range coll.Dtypes {
			op := coll.Ops[i%len(coll.Ops)]
			if !coll.Supports(op, d) {
				op = coll.Sum
			}
			jobs = append(jobs, job{c: coll.Allreduce, np: 3, nodes: 1, dtype: d, op: op})
		}
		for i, op := range coll.Ops {
			d := []coll.Dtype{coll.Int8, coll.Uint16, coll.Int64, coll.Uint32}[i%4]
			if !op.Bitwise() && i%2 == 0 {
				d = []coll.Dtype{coll.Float16, coll.Bfloat16, coll.Float64}[i%3]
			}
			jobs = append(jobs, job{c: coll.ReduceScatter, np: 4, nodes: 2, dtype: d, op: op})
		}
	}
	for i, j := range jobs {
		if len(sched.Algorithms(j.c)) == 0 {
			t.Logf("job %d: no %s algorithm registered", i, j.c)
			continue
		}
		elem := int64(1)
		args := []string{string(j.c), "--alg", "all", "--np", strconv.Itoa(j.np), "--nodes", strconv.Itoa(j.nodes),
			"--iters", "2", "--warmup", "1", "--validate"}
		if j.c.Reduces() {
			elem = int64(j.dtype.Size())
			args = append(args, "--dtype", j.dtype.String(), "--op", j.op.String())
		}
		args = append(args, "--bytes", sampleSizes(elem, testing.Short()))
		args = append(args, j.extra...)
		start := time.Now()
		stdout, stderr, code := runCLI(t, append([]string{"bench"}, append(args, "--json")...)...)
		require.Zero(t, code, "job %d: goring bench %v: %s", i, args, stderr)
		var doc bench.Document
		require.NoError(t, json.Unmarshal([]byte(stdout), &doc), "job %d", i)
		require.NotEmpty(t, doc.Results, "job %d", i)
		for _, r := range doc.Results {
			require.True(t, r.Validated, "job %d", i)
		}
		t.Logf("job %d: %s np=%d %s %s: %d rows in %v", i, j.c, j.np, j.dtype, j.op, len(doc.Results), time.Since(start).Round(time.Millisecond))
	}
}

// Large messages, up to 64 MiB, validated (not in -short).
func TestBenchLargeMessagesValidate(t *testing.T) {
	needUCX(t)
	if testing.Short() {
		t.Skip("-short: no 64 MiB runs")
	}
	cases := [][]string{
		{"allgather", "--alg", "ring", "--np", "2", "--bytes", "64MiB"},
		{"allreduce", "--alg", "all", "--np", "4", "--nodes", "2", "--bytes", "16MiB:64MiB", "--dtype", "float32", "--op", "sum"},
		{"allgather", "--alg", "all", "--np", "4", "--nodes", "2", "--bytes", "16777217"},
	}
	for i, c := range cases {
		if len(sched.Algorithms(coll.Collective(c[0]))) == 0 {
			continue
		}
		rows := benchJSON(t, append(c, "--iters", "1", "--warmup", "0", "--validate")...)
		require.NotEmpty(t, rows, "case %d", i)
		for _, r := range rows {
			assert.True(t, r.Validated, "case %d", i)
		}
	}
}

func TestBenchOutputs(t *testing.T) {
	needUCX(t)
	png := filepath.Join(t.TempDir(), "lat.png")
	stdout, stderr, code := runCLI(t, "bench", "allgather", "--alg", "ring", "--np", "2", "--bytes", "1:1KiB", "--iters", "3", "--warmup", "0", "--png", png)
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "# Size")
	assert.Contains(t, stdout, "Avg Latency(us)")
	assert.Contains(t, stdout, "Bus BW(GB/s)")
	assert.Equal(t, 11, strings.Count(stdout, "\n")-2, "one row per size 1..1024:\n%s", stdout)
	data, err := os.ReadFile(png)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(data, []byte("\x89PNG")))

	stdout, stderr, code = runCLI(t, "bench", "allgather", "--alg", "ring", "--np", "2", "--bytes", "8:16", "--iters", "2", "--warmup", "0", "--csv")
	require.Zero(t, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, strings.Join(bench.CSVHeader, ","), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "allgather,ring,8,"), lines[1])
}

// childPids lists the processes whose parent is pid, with their
// GORING_RANK.
func childRanks(t *testing.T, pid int) map[int]int {
	out := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cpid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cpid))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte(launch.EnvRank+"=")); ok {
				r, _ := strconv.Atoi(string(v))
				out[r] = cpid
			}
		}
	}
	return out
}

// Killing (or stopping: a stalled rank) one rank mid-run: the launcher
// exits non-zero within 10 s naming it, and every other rank exits
// non-zero naming it too. Nothing is left running.
func TestBenchKilledRankFailsJob(t *testing.T) {
	needUCX(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	cases := []struct {
		victim int
		sig    syscall.Signal
	}{{2, syscall.SIGKILL}, {0, syscall.SIGKILL}, {1, syscall.SIGSTOP}}
	if testing.Short() {
		cases = cases[:1]
	}
	for i, c := range cases {
		victim := c.victim
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd, stdout, stderr, ranks := startBenchRanks(t, ctx, exe, 4, "bench", "allgather", "--alg", "ring", "--np", "4", "--nodes", "2",
			"--bytes", "64KiB", "--iters", "1000000", "--warmup", "0")
		time.Sleep(1500 * time.Millisecond) // well into the timed loop
		require.NoError(t, syscall.Kill(ranks[victim], c.sig))
		killed := time.Now()
		err := cmd.Wait()
		elapsed := time.Since(killed)
		cancel()
		require.Error(t, err, "case %d: the launcher must fail", i)
		assert.Less(t, elapsed, 10*time.Second, "case %d", i)
		assert.Contains(t, stderr.String(), fmt.Sprintf("goring: rank %d failed", victim), "case %d: %s", i, stderr.String())
		for r := 0; r < 4; r++ {
			if r != victim {
				assert.Contains(t, stderr.String(), fmt.Sprintf("goring: rank %d: rank %d failed", r, victim), "case %d: rank %d", i, r)
			}
		}
		for r, pid := range ranks {
			_, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid))
			if err == nil {
				st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				assert.Contains(t, string(st), ") Z", "case %d: rank %d still alive", i, r)
			}
		}
		assert.NotContains(t, stdout.String(), "results", "case %d", i)
	}
}

// The same binary under Debian's mpirun: rank 0 hosts the coordinator.
func TestBenchUnderMpirun(t *testing.T) {
	needUCX(t)
	if testing.Short() {
		t.Skip("-short: no mpirun")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not installed")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, "-np", "4", "--allow-run-as-root", "--oversubscribe", exe,
		"bench", "allgather", "--alg", "ring", "--nodes", "2", "--bytes", "1:64KiB", "--iters", "3", "--warmup", "1", "--validate", "--json")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORING_") && !strings.HasPrefix(kv, "OMPI_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var doc bench.Document
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &doc), stdout.String())
	assert.Len(t, doc.Results, 17)
	for _, r := range doc.Results {
		assert.True(t, r.Validated)
	}
}

// alltoallv traffic options over UCX: a hot receiver, and a counts file
// with zeros and odd sizes.
func TestBenchAlltoallvTraffic(t *testing.T) {
	needUCX(t)
	rows := benchJSON(t, "alltoallv", "--np", "4", "--nodes", "2", "--bytes", "1000:4000", "--hot", "1:0.7", "--iters", "2", "--warmup", "0", "--validate")
	require.NotEmpty(t, rows)
	counts := filepath.Join(t.TempDir(), "counts.json")
	require.NoError(t, os.WriteFile(counts, []byte(`[[0,5,70001,3],[1,0,0,0],[9,9,9,9],[0,0,0,12345]]`), 0o600))
	rows = benchJSON(t, "alltoallv", "--np", "4", "--bytes", "1", "--counts", counts, "--iters", "2", "--warmup", "0", "--validate")
	require.NotEmpty(t, rows)
	for _, r := range rows {
		assert.True(t, r.Validated)
	}
}

// A missing libucp (GORING_LIBUCP points at a file that does not exist):
// one line on stderr naming libucp, a non-zero exit, nothing on stdout.
// It runs in a separate process because ucx.Load caches its first result.
func TestBenchMissingLibUCP(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cases := [][]string{
		{"bench", "allgather", "--np", "2", "--bytes", "1KiB"},
		{"bench", "allreduce", "--alg", "all", "--np", "4", "--nodes", "2", "--bytes", "1KiB:4KiB", "--json"},
	}
	for i, args := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), envRunCLI+"=1", ucx.LibEnv+"=/nonexistent/libucp.so.0")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, "case %d: %s", i, stderr.String())
		assert.NotEqual(t, 0, exitErr.ExitCode(), "case %d", i)
		assert.Empty(t, stdout.String(), "case %d", i)
		msg := strings.TrimSuffix(stderr.String(), "\n")
		assert.NotContains(t, msg, "\n", "case %d: one line expected: %q", i, msg)
		assert.Contains(t, msg, "libucp", "case %d", i)
		assert.Contains(t, msg, "/nonexistent/libucp.so.0", "case %d", i)
	}
}

// startBenchRanks starts exe with args (a bench job of n ranks) and waits
// until its n rank processes exist; it returns the job, its output and
// the ranks' pids by rank.
func startBenchRanks(t *testing.T, ctx context.Context, exe string, n int, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer, map[int]int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), envRunCLI+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	var ranks map[int]int
	require.Eventually(t, func() bool { ranks = childRanks(t, cmd.Process.Pid); return len(ranks) == n }, 20*time.Second, 20*time.Millisecond)
	return cmd, &stdout, &stderr, ranks
}

// --alg auto: every call names no algorithm, so the team layer's own
// choice runs; each row says auto, validates, and names the algorithm and
// runner that ran (in the JSON, the table's last column and the CSV's
// last two).
func TestBenchAuto(t *testing.T) {
	needUCX(t)
	rows := benchJSON(t, "allreduce", "--alg", "auto", "--np", "4", "--nodes", "2", "--bytes", "4,64KiB", "--iters", "3", "--warmup", "1", "--validate")
	require.Len(t, rows, 2)
	for _, r := range rows {
		assert.Equal(t, "auto", r.Algorithm)
		assert.True(t, r.Validated)
		assert.NotEmpty(t, r.Ran)
		assert.Equal(t, "machine", r.Runner)
	}

	stdout, stderr, code := runCLI(t, "bench", "allgather", "--alg", "auto", "--np", "2", "--bytes", "8", "--iters", "2", "--warmup", "0")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "algorithm auto")
	assert.Contains(t, stdout, "Ran (runner)")
	assert.Contains(t, stdout, "(machine)")

	stdout, stderr, code = runCLI(t, "bench", "allgather", "--alg", "auto", "--np", "2", "--bytes", "8", "--iters", "2", "--warmup", "0", "--csv")
	require.Zero(t, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, strings.Join(bench.CSVHeader, ",")+",ran,runner", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "allgather,auto,8,"), lines[1])
	assert.True(t, strings.HasSuffix(lines[1], ",machine"), lines[1])
}

// --lanes auto: one team whose context gives each host call the lanes it
// pays for (lanes=auto); with --alg auto each row is validated and names
// the runner the team chose, lanes or one machine. Not on device memory.
func TestBenchAutoLanes(t *testing.T) {
	needUCX(t)
	rows := benchJSON(t, "allreduce", "--alg", "auto", "--lanes", "auto", "--np", "2", "--bytes", "4,4MiB", "--iters", "2", "--warmup", "1", "--validate")
	require.Len(t, rows, 2)
	for _, r := range rows {
		assert.Equal(t, "auto", r.Algorithm)
		assert.True(t, r.Validated)
		assert.Zero(t, r.Lanes, "one team, no lane count of bench's own")
		t.Logf("%d bytes: %s (%s)", r.Bytes, r.Ran, r.Runner)
		assert.Contains(t, []string{"machine", "lanes"}, r.Runner)
	}
	_, stderr, code := runCLI(t, "bench", "allreduce", "--np", "2", "--bytes", "4", "--lanes", "auto", "--mem", "cuda")
	assert.NotZero(t, code)
	assert.Contains(t, stderr, "--lanes auto: lanes run on host memory only")
}

// --init-per-call: every timed call is a new collective of the team
// layer, made and finalized in the timed region, as Open MPI's coll/ucc
// makes one per MPI call; rows are validated and name what ran.
func TestBenchInitPerCall(t *testing.T) {
	needUCX(t)
	rows := benchJSON(t, "allreduce", "--alg", "auto", "--np", "2", "--bytes", "4,64KiB", "--iters", "3", "--warmup", "1", "--validate", "--init-per-call")
	require.Len(t, rows, 2)
	for _, r := range rows {
		assert.True(t, r.Validated)
		assert.NotEmpty(t, r.Ran)
	}
	rows = benchJSON(t, "allgather", "--alg", "ring", "--np", "3", "--bytes", "1,4099", "--iters", "3", "--warmup", "1", "--validate", "--init-per-call")
	require.Len(t, rows, 2)
	for _, r := range rows {
		assert.True(t, r.Validated)
	}
}
