package scripts

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on this machine")
	}
	return p
}

// peer_table.py on the reduce_scatter rows of 2xH100, 2026-11-25 (docs/gpu.md
// "Two H100s against NCCL and UCC", testdata/peers): goring's best is the fastest row over every
// file, ucc_perftest's size (all n blocks for reduce_scatter) becomes
// goring's block, and each ratio is goring's bus bandwidth over the peer's.
func TestPeerTable(t *testing.T) {
	d := "testdata/peers/"
	out, err := exec.Command(python(t), "peer_table.py", "--np", "2", "--json",
		"--goring", d+"goring_reduce_scatter.json", d+"goring_reduce_scatter_2pc.json",
		"--nccl", d+"nccl.json", "--ucc", "tl/ucp:reduce_scatter="+d+"ucc_perftest_reduce_scatter.txt").Output()
	require.NoError(t, err)
	var doc struct {
		Rows []struct {
			Collective string
			Bytes      int64
			GoringAlg  string  `json:"goring_alg"`
			GoringUS   float64 `json:"goring_us"`
			Peers      map[string]struct {
				US    float64 `json:"us"`
				Ratio float64 `json:"ratio"`
			}
		}
	}
	require.NoError(t, json.Unmarshal(out, &doc))
	require.Len(t, doc.Rows, 2)
	small, big := doc.Rows[0], doc.Rows[1]
	assert.Equal(t, int64(4<<20), small.Bytes)
	assert.Equal(t, "ring", small.GoringAlg, "73.6 us, the fastest of four rows at 4 MiB")
	assert.Equal(t, "ring+2pc", big.GoringAlg, "977.4 us at 256 MiB")
	assert.InDelta(t, 773.70, small.Peers["tl/ucp"].US, 1e-9, "perftest's 8 MiB source is the 4 MiB block of two ranks")
	assert.InDelta(t, 3874.10, big.Peers["tl/ucp"].US, 1e-9)
	// Same bytes on both sides: the ratio of bus bandwidths is the ratio of times.
	assert.InDelta(t, 48.50879907608032/73.5719, small.Peers["NCCL"].Ratio, 1e-9)
	assert.InDelta(t, 1088.4424209594727/977.38915, big.Peers["NCCL"].Ratio, 1e-9)
}

// peer_table.py names each of nccl_bench.py's algorithms as its own peer:
// NCCL's rows and the two-shot rows of another file sit side by side,
// each with its ratio; goring's --alg auto row names what the team ran.
func TestPeerTableNamesEachPeer(t *testing.T) {
	d := t.TempDir()
	write := func(name, alg string, us float64) string {
		p := filepath.Join(d, name)
		row := map[string]any{"collective": "allreduce", "algorithm": alg, "bytes": 1 << 20, "avg_us": us}
		if alg == "auto" {
			row["ran"] = "node_two_shot" // goring bench --alg auto names what ran
		}
		doc := map[string]any{"results": []map[string]any{row}}
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	g := write("goring.json", "auto", 20)
	out, err := exec.Command(python(t), "peer_table.py", "--np", "4", "--json", "--goring", g,
		"--nccl", write("nccl.json", "nccl", 30), "--nccl", write("two_shot.json", "symm_two_shot", 40)).Output()
	require.NoError(t, err)
	var doc struct {
		Rows []struct {
			GoringAlg string `json:"goring_alg"`
			Peers     map[string]struct {
				US    float64 `json:"us"`
				Ratio float64 `json:"ratio"`
			}
		}
	}
	require.NoError(t, json.Unmarshal(out, &doc))
	require.Len(t, doc.Rows, 1)
	assert.Equal(t, "auto:node_two_shot", doc.Rows[0].GoringAlg, "an auto row names the team layer's choice")
	assert.InDelta(t, 1.5, doc.Rows[0].Peers["NCCL"].Ratio, 1e-9)
	assert.InDelta(t, 2.0, doc.Rows[0].Peers["two-shot"].Ratio, 1e-9)

	// A peer timed per call (nccl_bench.py --clock host) is a peer of its
	// own beside the same algorithm timed back to back.
	perCall := filepath.Join(d, "two_shot_host.json")
	b, err := json.Marshal(map[string]any{"results": []map[string]any{{"collective": "allreduce", "algorithm": "symm_two_shot",
		"bytes": 1 << 20, "avg_us": 25, "clock": "host"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(perCall, b, 0o644))
	out, err = exec.Command(python(t), "peer_table.py", "--np", "4", "--json", "--goring", g,
		"--nccl", write("two_shot.json", "symm_two_shot", 40), "--nccl", perCall).Output()
	require.NoError(t, err)
	doc.Rows = nil
	require.NoError(t, json.Unmarshal(out, &doc))
	require.Len(t, doc.Rows, 1)
	assert.InDelta(t, 2.0, doc.Rows[0].Peers["two-shot"].Ratio, 1e-9)
	assert.InDelta(t, 1.25, doc.Rows[0].Peers["two-shot, per call"].Ratio, 1e-9)
}

// peer_table.py's bus bandwidth is goring's coll.BusBytes for every
// collective it tables: a bcast moves its bytes once (factor 1), an
// allgather (n-1) blocks, an allreduce 2(n-1)/n of its vector.
func TestPeerTableBusBandwidth(t *testing.T) {
	py := python(t)
	const n, b, us = 4, 1 << 20, 100.0
	var rows []map[string]any
	for _, c := range []coll.Collective{coll.Bcast, coll.Allgather, coll.Allreduce, coll.ReduceScatter} {
		rows = append(rows, map[string]any{"collective": string(c), "algorithm": "ring", "bytes": b, "avg_us": us})
	}
	g := filepath.Join(t.TempDir(), "g.json")
	text, err := json.Marshal(map[string]any{"results": rows})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(g, text, 0o644))
	out, err := exec.Command(py, "peer_table.py", "--np", strconv.Itoa(n), "--json", "--goring", g).Output()
	require.NoError(t, err)
	var doc struct {
		Rows []struct {
			Collective string
			GBps       float64 `json:"goring_busbw_GBps"`
		}
	}
	require.NoError(t, json.Unmarshal(out, &doc))
	require.Len(t, doc.Rows, 4)
	for _, r := range doc.Rows {
		want, err := coll.BusBandwidthGBps(coll.Collective(r.Collective), n, b, nil, us)
		require.NoError(t, err)
		assert.InDelta(t, want, r.GBps, 1e-9, r.Collective)
	}
}

// nccl_bench.py refuses what it must before it touches a GPU: NVLink
// multicast left on (shared machines, NCCL's and symmetric memory's), an
// unknown collective, a size that is not whole float32 elements, the
// two-shot peer for anything but an allreduce.
func TestNCCLBenchRefusals(t *testing.T) {
	py := python(t)
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"NCCL_NVLS_ENABLE=1", nil, "set NCCL_NVLS_ENABLE=0"},
		{"NCCL_NVLS_ENABLE=0", []string{"--colls", "alltoall"}, "unknown collective 'alltoall'"},
		{"NCCL_NVLS_ENABLE=0", []string{"--bytes", "4097"}, "not a whole number of float32 elements"},
		{"NCCL_NVLS_ENABLE=0", []string{"--np", "2", "--rank", "2"}, "out of range"},
		{"NCCL_NVLS_ENABLE=0", []string{"--clock", "wall"}, "invalid choice: 'wall'"},
		{"NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1", []string{"--how", "two_shot"}, "give --colls allreduce"},
		{"NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=0", []string{"--how", "two_shot", "--colls", "allreduce"},
			"set TORCH_SYMM_MEM_DISABLE_MULTICAST=1"},
	} {
		cmd := exec.Command(py, append([]string{"nccl_bench.py"}, c.args...)...)
		cmd.Env = append(os.Environ(), strings.Fields(c.env)...)
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%v", c.args)
		assert.True(t, strings.Contains(string(out), c.want), "%v: %s", c.args, out)
	}
}

// gemm_beside.py refuses, before it touches a GPU, NVLink multicast left
// on, the symmetric-memory path for a collective it has none of, and a
// size that is not whole bf16 elements.
func TestGemmBesideRefusals(t *testing.T) {
	py := python(t)
	off := []string{"NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1"}
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"NCCL_NVLS_ENABLE=1", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1"}, []string{"--coll", "allgather", "--bytes", "64"}, "set NCCL_NVLS_ENABLE=0"},
		{[]string{"NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=0"}, []string{"--coll", "allgather", "--bytes", "64"}, "set TORCH_SYMM_MEM_DISABLE_MULTICAST=1"},
		{off, []string{"--coll", "allreduce", "--how", "symm", "--bytes", "64"}, "path is an allgather"},
		{off, []string{"--coll", "allgather", "--bytes", "63"}, "not a whole number of bf16 elements"},
	} {
		cmd := exec.Command(py, append([]string{"gemm_beside.py", "torch"}, c.args...)...)
		cmd.Env = append(os.Environ(), c.env...)
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%v", c.args)
		assert.True(t, strings.Contains(string(out), c.want), "%v: %s", c.args, out)
	}
}

// ucc_env_args.sh hands mpirun every setting of an environment file, and
// nothing of its comments: the tests and benchmarks that run the shipped
// configuration take all of it from here.
func TestUCCEnvArgs(t *testing.T) {
	// The shipped file's settings, read here so that `go test`'s cache
	// sees the file: a result cached before the file changed would
	// otherwise pass on a machine whose cache is warm and fail on a fresh
	// one (it did, 2026-11-26).
	shipped := "../ompi-config/goring-ucc.env"
	text, err := os.ReadFile(shipped)
	require.NoError(t, err)
	var want strings.Builder
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "UCC_") && strings.Contains(line, "=") {
			want.WriteString("-x " + line + " ")
		}
	}
	require.Contains(t, want.String(), "-x UCC_TL_GORING_CROSSMEM=auto ", "the shipped file turns cross-memory reads on")
	out, err := exec.Command("bash", "ucc_env_args.sh", shipped).Output()
	require.NoError(t, err)
	assert.Equal(t, want.String(), string(out))
	f := filepath.Join(t.TempDir(), "x.env")
	require.NoError(t, os.WriteFile(f, []byte("# UCC_TL_GORING_TUNE=commented out\nUCC_TL_UCP_TUNE=allreduce:host:0-4K:0\nOTHER=1\n  UCC_INDENTED=1\n"), 0o644))
	out, err = exec.Command("bash", "ucc_env_args.sh", f).Output()
	require.NoError(t, err)
	assert.Equal(t, "-x UCC_TL_UCP_TUNE=allreduce:host:0-4K:0 ", string(out))
	require.Error(t, exec.Command("bash", "ucc_env_args.sh").Run(), "no file: a usage error")
}

// experiments/cma/cma_rate.c, the rates docs/ucc.md "One thread a rank"
// quotes: it reads a child's buffer and checks every byte (exit 1 on a
// wrong one), and says what it measured.
func TestCMARateProgram(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	bin := filepath.Join(t.TempDir(), "cma_rate")
	out, err := exec.Command("gcc", "-O2", "-Wall", "../experiments/cma/cma_rate.c", "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "100003", "3").CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("no cross-memory reads here: %s", out)
	}
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `^cma_rate: 100003 bytes, median of 3 rounds: process_vm_readv [0-9.]+ us \([0-9.]+ GB/s\), memcpy [0-9.]+ us`, string(out))
	err = exec.Command(bin, "0").Run()
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode(), "no bytes: a usage error")
}

// experiments/cma/cma_allreduce.c, the cross-memory-read allreduce that
// docs/ucc.md measures: its results are checked by the program itself on
// every rank (a wrong element exits non-zero), here at odd shapes.
func TestCMAAllreduceProgram(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	bin := filepath.Join(t.TempDir(), "cma_allreduce")
	out, err := exec.Command("gcc", "-O2", "-Wall", "-pthread", "../experiments/cma/cma_allreduce.c", "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, args := range [][]string{{"2", "1048576", "1", "3"}, {"3", "120012", "2", "2"}, {"4", "64", "1", "2"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil && strings.Contains(string(out), "process_vm_readv") {
			t.Skipf("no cross-memory reads here: %s", out)
		}
		require.NoError(t, err, "%v: %s", args, out)
		assert.Contains(t, string(out), "direct allreduce", "%v", args)
	}
	err = exec.Command(bin, "3", "10").Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode(), "a size that no rank count divides")
}

// Every shell script of the repository parses (bash -n). Reading them
// (and the C measurement programs, the Python scripts and their test
// data) here also puts them among the files `go test` watches for this
// package, so a changed script is never hidden behind a cached result of
// the tests that run it.
func TestShellScriptsParse(t *testing.T) {
	var scripts []string
	for _, pattern := range []string{"*.sh", "../tests/*/*.sh", "../experiments/*/*.sh", "../.ci/run", "../experiments/cma/*.c", "*.py"} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		scripts = append(scripts, m...)
	}
	require.Greater(t, len(scripts), 5, "the scripts are where this test looks")
	for _, s := range scripts {
		_, err := os.ReadFile(s)
		require.NoError(t, err)
		if strings.HasSuffix(s, ".c") || strings.HasSuffix(s, ".py") {
			continue // read for the cache; built or run by the tests that use them
		}
		out, err := exec.Command("bash", "-n", s).CombinedOutput()
		assert.NoError(t, err, "%s: %s", s, out)
	}
	for _, f := range []string{"../ompi-config/goring-ucc.env", "../ompi-config/goring-ucc-all.env", "../ompi-config/goring-mca-params.conf"} {
		_, err := os.ReadFile(f)
		require.NoError(t, err)
	}
	// The inputs the Python scripts read in the tests above.
	require.NoError(t, filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		_, err = os.ReadFile(path)
		return err
	}))
}

// netns_table.py puts every goring algorithm of a collective beside NCCL
// at each size, picks goring's fastest, and divides its time by NCCL's; a
// size NCCL has no row for gets "-".
func TestNetnsTable(t *testing.T) {
	py := python(t)
	d := t.TempDir()
	g := filepath.Join(d, "g.json")
	n := filepath.Join(d, "n.json")
	require.NoError(t, os.WriteFile(g, []byte(`{"results": [
 {"collective": "allgather", "algorithm": "ring", "bytes": 1048576, "avg_us": 100, "validated": false},
 {"collective": "allgather", "algorithm": "parallel_rings", "bytes": 1048576, "avg_us": 80, "validated": false},
 {"collective": "allgather", "algorithm": "ring", "bytes": 2097152, "avg_us": 200, "validated": false}]}`), 0o644))
	require.NoError(t, os.WriteFile(n, []byte(`{"results": [{"collective": "allgather", "algorithm": "nccl", "bytes": 1048576, "avg_us": 160}]}`), 0o644))
	out, err := exec.Command(py, "netns_table.py", "--goring", g, "--nccl", n).CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 4, "%s", out)
	assert.Equal(t, []string{"1048576", "80.0", "100.0", "160.0", "parallel_rings", "0.500"}, strings.Fields(lines[2]))
	assert.Equal(t, []string{"2097152", "-", "200.0", "-", "ring", "-"}, strings.Fields(lines[3]))
}

// nccl_bench.py's alltoallv sends what goring bench sends: its
// --print-counts matrices equal bench.HotCounts's (and, without --hot,
// bench.UniformCounts's) entry for entry, on odd sizes, a hot rank other
// than 0, and fractions whose product truncates.
func TestNCCLBenchCountsMatchGoring(t *testing.T) {
	py := python(t)
	for _, c := range []struct {
		n    int
		hot  int
		frac float64
		raw  string // --hot as typed; "" for uniform
	}{
		{2, 0, 0.7, "0:0.7"},
		{3, 1, 0.7, "1:0.7"},
		{4, 3, 0.25, "3:0.25"},
		{5, 2, 0.333, "2:0.333"},
		{7, 6, 0.1, "6:0.1"},
		{8, 4, 1, "4:1"},
		{6, 5, 0, "5:0"},
		{1, 0, 0.3, "0:0.3"},
		{4, 0, 0, ""},
		{3, 0, 0, ""},
	} {
		sizes := []int64{1, 7, 4099, 70001, 1 << 20, 3<<20 + 5}
		var spec []string
		for _, b := range sizes {
			spec = append(spec, strconv.FormatInt(b, 10))
		}
		args := []string{"nccl_bench.py", "--print-counts", "--np", strconv.Itoa(c.n), "--bytes", strings.Join(spec, ",")}
		if c.raw != "" {
			args = append(args, "--hot", c.raw)
		}
		out, err := exec.Command(py, args...).Output()
		require.NoError(t, err, "%v", args)
		var got []struct {
			Bytes  int64
			Counts [][]int64
		}
		require.NoError(t, json.Unmarshal(out, &got), "%s", out)
		require.Len(t, got, len(sizes))
		for k, b := range sizes {
			want := bench.UniformCounts(c.n, b)
			if c.raw != "" {
				want, err = bench.HotCounts(c.n, b, c.hot, c.frac)
				require.NoError(t, err)
			}
			assert.Equal(t, b, got[k].Bytes)
			assert.Equal(t, want, got[k].Counts, "n %d bytes %d --hot %q", c.n, b, c.raw)
		}
	}
	// What goring refuses, nccl_bench.py refuses.
	for _, hot := range []string{"4:0.5", "0:1.5", "x:0.5", "0:nan"} {
		out, err := exec.Command(py, "nccl_bench.py", "--print-counts", "--np", "4", "--bytes", "8", "--hot", hot).CombinedOutput()
		require.Error(t, err, "--hot %s", hot)
		assert.Contains(t, string(out), "--hot", "--hot %s", hot)
	}
}

// netns_table.py sets NCCL's alltoallv row (nccl_bench.py's, after NCCL's
// version line) beside goring's of the same size, with the ratio.
func TestNetnsTableAlltoallv(t *testing.T) {
	py := python(t)
	d := t.TempDir()
	g, n := filepath.Join(d, "g.json"), filepath.Join(d, "n.json")
	require.NoError(t, os.WriteFile(g, []byte(`{"results":[{"collective":"alltoallv","algorithm":"nimble","bytes":1048576,"avg_us":7400}]}`), 0o644))
	require.NoError(t, os.WriteFile(n, []byte("NCCL version 2.27.3+cuda12.9\n"+
		`{"results":[{"collective":"alltoallv","algorithm":"nccl","bytes":1048576,"avg_us":8000}]}`), 0o644))
	out, err := exec.Command(py, "netns_table.py", "--goring", g, "--nccl", n).Output()
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^\s+1048576\s+7400\.0\s+8000\.0\s+nimble\s+0\.925$`, string(out))
}

// nodeTable is the table-making Python of device_node.sh (its heredoc),
// written to a file of its own for the tests.
func nodeTable(t *testing.T) string {
	t.Helper()
	return heredoc(t, "device_node.sh", `>"$OUT/table.txt" <<'EOF'`)
}

// heredoc writes the script that file passes to a program on the line
// ending in marker (a quoted EOF heredoc) to a file, and returns its path.
func heredoc(t *testing.T, file, marker string) string {
	t.Helper()
	text, err := os.ReadFile(file)
	require.NoError(t, err)
	s := string(text)
	i := strings.Index(s, marker)
	require.Greater(t, i, 0, "%s's heredoc", file)
	s = s[i:]
	s = s[strings.Index(s, "\n")+1:]
	j := strings.Index(s, "\nEOF\n")
	require.Greater(t, j, 0)
	p := filepath.Join(t.TempDir(), filepath.Base(file)+".py")
	require.NoError(t, os.WriteFile(p, []byte(s[:j+1]), 0o644))
	return p
}

// perftestOut is ucc_perftest -F's table of one run: count, size, avg,
// min, max (us), then bus bandwidth, for float32 counts.
func perftestOut(counts []int64, sizeTimes int64, us ...float64) string {
	var b strings.Builder
	b.WriteString("Collective:             Allgather\n       Count        Size                Time, us                       Bus Bandwidth, GB/s\n")
	for k, c := range counts {
		f := strconv.FormatFloat(us[k], 'f', 2, 64)
		b.WriteString("  " + strconv.FormatInt(c, 10) + "  " + strconv.FormatInt(c*4*sizeTimes, 10) + "  " + f + "  1.00  " + f + "  9.99  9.99  9.99\n")
	}
	return b.String()
}

// device_node.sh's table reads from UCC's trace the layer each column ran:
// a peer that fell back to tl/ucp is marked * and is not the faster peer,
// and the default column names UCC's choice. With every call in place
// (INPLACE=1) the trace prints a destination and no source, and an
// allgather's destination is the whole result.
func TestNodeTableTrace(t *testing.T) {
	for _, inplace := range []bool{false, true} {
		t.Run(map[bool]string{false: "out of place", true: "in place"}[inplace], func(t *testing.T) { nodeTableTrace(t, inplace) })
	}
}

func nodeTableTrace(t *testing.T, inplace bool) {
	py := python(t)
	table := nodeTable(t)
	R := t.TempDir()
	w := func(name, s string) { require.NoError(t, os.WriteFile(filepath.Join(R, name), []byte(s), 0o644)) }
	const np = 2
	counts := []int64{4096, 8192}
	trace := func(c string, tl func(count int64) string) string {
		var b strings.Builder
		for _, n := range counts {
			dst := n // allreduce: the vector
			switch c {
			case "allgather":
				dst = n * np // the whole result
			case "reduce_scatter":
				dst = n // in place the whole input, else the block: ucc_perftest's count either way
			}
			op := map[string]string{"allgather": "Allgather", "allreduce": "Allreduce sum", "reduce_scatter": "Reduce_scatter sum"}[c]
			bufs := "dst={0x7f00, " + strconv.FormatInt(dst, 10) + ", float32, cuda}"
			if inplace {
				op += " inplace"
			} else {
				src := map[string]int64{"allgather": n, "allreduce": n, "reduce_scatter": n * np}[c]
				bufs = "src={0x7e00, " + strconv.FormatInt(src, 10) + ", float32, cuda}, " + bufs
			}
			b.WriteString("[1700000000.1] ucc_coll.c:339 UCC_COLL INFO coll_init: " + op + ": " + bufs + "; CL_BASIC {" + tl(n) + "}, team_id 32768\n")
		}
		return b.String()
	}
	for _, c := range []string{"allgather", "allreduce", "reduce_scatter"} {
		rs := int64(1)
		if c == "reduce_scatter" {
			rs = np // ucc_perftest prints reduce_scatter's count times the ranks
		}
		w("perf_nccl_"+c+".txt", perftestOut(counts, rs, 10, 20))
		w("perf_cuda_"+c+".txt", perftestOut(counts, rs, 30, 40))
		w("perf_goring_"+c+".txt", perftestOut(counts, rs, 15, 20))
		// tl/nccl fell back to tl/ucp at the smaller size.
		w("trace_nccl_"+c+".txt", trace(c, func(n int64) string {
			if n == 4096 {
				return "TL_UCP"
			}
			return "TL_NCCL"
		}))
		w("trace_cuda_"+c+".txt", trace(c, func(int64) string { return "TL_CUDA" }))
		w("trace_goring_"+c+".txt", trace(c, func(int64) string { return "TL_GORING" }))
		w("trace_default_"+c+".txt", trace(c, func(int64) string { return "TL_GORING" }))
	}
	out, err := exec.Command(py, table, R, "2", "2", "allgather allreduce reduce_scatter", "nccl cuda").CombinedOutput()
	require.NoError(t, err, "%s", out)
	rows := map[string][]string{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 8 {
			rows[f[0]+" "+f[1]] = f[2:]
		}
	}
	for _, c := range []string{"allgather", "allreduce", "reduce_scatter"} {
		// The 16 KiB row: NCCL's 10 us ran on tl/ucp; the faster peer is tl/cuda (30 us), 2x goring's 15.
		assert.Equal(t, []string{"10.0*", "30.0", "15.0", "2.00", "cuda", "goring"}, rows[c+" 16384"], "%s\n%s", c, out)
		assert.Equal(t, []string{"20.0", "40.0", "20.0", "1.00", "nccl", "goring"}, rows[c+" 32768"], "%s\n%s", c, out)
	}
	assert.Contains(t, string(out), "goring faster than the faster peer in 3 of 6 rows")
}

// besideTable is device_beside.sh's table script, written to a file.
func besideTable(t *testing.T) string {
	t.Helper()
	return heredoc(t, "device_beside.sh", `>"$OUT/beside.txt" <<'EOF'`)
}

// The GEMM's speed beside a collective counts only the batches of the
// window's middle: the first 2 s (mpirun and the layer start) and the
// last 1 s (they end) ran beside no collective. Here the GEMM ran at 400
// TFLOP/s for the 1 s the collective ran and at 600 in the window's last
// second, in twice as many batches: counting that second would report
// 600, the GEMM's whole speed.
func TestBesideTableCutsTheWindowsEnds(t *testing.T) {
	py := python(t)
	R := t.TempDir()
	w := func(name, s string) { require.NoError(t, os.WriteFile(filepath.Join(R, name), []byte(s), 0o644)) }
	var g strings.Builder
	add := func(from, to float64, n int, v float64) {
		for k := range n {
			fmt.Fprintf(&g, "%.3f %.1f\n", from+(to-from)*float64(k)/float64(n), v)
		}
	}
	add(100, 104, 40, 600) // alone: the window gemm-alone, 100-104
	add(200, 202, 20, 550) // the layer starting
	add(202, 203, 10, 400) // the collective
	add(203, 204, 20, 600) // the layer ending
	w("gemm0.log", g.String())
	w("windows.txt", "gemm-alone 100 104\nnccl/allgather/1024 200 204\n")
	w("nccl_allgather_1024.alone", strings.Join([]string{"       256        1024       10.00       10.00       10.00        0.1        0.1        0.1"}, "\n")+"\n")
	w("nccl_allgather_1024.beside", "       256        1024       20.00       20.00       20.00        0.1        0.1        0.1\n")
	out, err := exec.Command(py, besideTable(t), R, "1").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var row string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "nccl") {
			row = l
		}
	}
	f := strings.Fields(row)
	require.Len(t, f, 9, "the row: %q\n%s", row, out)
	assert.Equal(t, "400", f[6], "the GEMM's TFLOP/s beside the collective: %s", out)
	assert.Equal(t, "67%", f[7], "kept: 400 of 600")
}
