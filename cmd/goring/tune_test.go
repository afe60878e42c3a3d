package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/tune"
)

// fakeMpirun stands for Open MPI's mpirun: it takes -np N and -x
// NAME=VALUE, records its arguments, and runs the program once (as rank
// 0, which alone prints ucc_perftest's table) with those settings.
const fakeMpirun = `#!/bin/sh
echo "$*" >>"$TUNE_TEST_LOG"
while [ $# -gt 0 ]; do
  case $1 in
    -np) export FAKE_NP=$2; shift 2 ;;
    -x) export "$2"; shift 2 ;;
    *) break ;;
  esac
done
exec "$@"
`

// fakePerftest prints a ucc_perftest table for -c/-b/-e with times by
// UCC_TLS's forced layer: goring 20 µs; tl/nccl 15, 25, 30 at 16, 32, 64
// KiB; tl/cuda 40 (its allreduce, which UCC runs on tl/ucp, as without
// NVLS). With UCC_COLL_TRACE=info, a trace line per size naming the layer.
const fakePerftest = `#!/bin/sh
while [ $# -gt 0 ]; do
  case $1 in -c) c=$2 ;; -b) b=$2 ;; -e) e=$2 ;; esac; shift
done
case $UCC_TLS in *goring) tl=GORING ;; *nccl) tl=NCCL ;; *cuda) tl=CUDA ;; *) tl=UCP ;; esac
[ "$tl" = CUDA ] && [ "$c" = allreduce ] && tl=UCP
echo "Collective:             $c"
echo "       Count        Size                Time, us"
echo "                                 avg         min         max"
n=$b
while [ "$n" -le "$e" ]; do
  if [ "$UCC_COLL_TRACE" = info ]; then
    src=$n; [ "$c" = reduce_scatter ] && src=$((n * FAKE_NP))
    if [ "$c" = bcast ]; then
      echo "[1] ucc_coll.c:339 UCC INFO coll_init: Bcast root 0: src={0x7f00, $n, float32, cuda}; CL_BASIC {TL_$tl}, team_id 1"
    else
      echo "[1] ucc_coll.c:339 UCC INFO coll_init: $c: src={0x7f00, $src, float32, cuda}, dst={0x7f80, $n, float32, cuda}; CL_BASIC {TL_$tl}, team_id 1"
    fi
  fi
  case $tl in
    GORING) t=20.00 ;;
    NCCL) case $n in 4096) t=15.00 ;; 8192) t=25.00 ;; *) t=30.00 ;; esac ;;
    *) t=40.00 ;;
  esac
  cnt=$n; [ "$c" = reduce_scatter ] && cnt=$((n * FAKE_NP))
  printf '%12d%12d%12s%12s%12s\n' "$cnt" $((cnt * 4)) $t $t $t
  n=$((n * 2))
done
`

func fakeTools(t *testing.T) (dir, log string) {
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mpirun"), []byte(fakeMpirun), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ucc_perftest"), []byte(fakePerftest), 0o755))
	log = filepath.Join(dir, "launches.txt")
	t.Setenv("TUNE_TEST_LOG", log)
	return dir, log
}

// goring tune ucc runs ucc_perftest through the launcher for goring and
// each peer forced, drops the sizes UCC ran on another layer than forced
// (tl/cuda's allreduce on tl/ucp), writes a claims file the team layer
// accepts, and prints what goring claims by it.
func TestTuneUCCWritesClaims(t *testing.T) {
	dir, log := fakeTools(t)
	out := filepath.Join(t.TempDir(), "claims.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"tune", "ucc", "--np", "2", "--launcher", filepath.Join(dir, "mpirun"),
		"--perftest", filepath.Join(dir, "ucc_perftest"), "--min", "16K", "--max", "64K",
		"--gpu", "NVIDIA H200", "--shared", "no", "--out", out}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	f, err := tune.ParseClaims(data)
	require.NoError(t, err)
	assert.Equal(t, "NVIDIA H200", f.GPU)
	assert.Equal(t, 2, f.Ranks)
	assert.False(t, f.Shared)
	require.Len(t, f.Rows["allreduce"], 3)
	for _, r := range f.Rows["allreduce"] {
		assert.Equal(t, 20.0, r.Goring)
		assert.NotContains(t, r.Peers, "cuda", "tl/cuda's allreduce ran on tl/ucp: not its time")
	}
	assert.Equal(t, map[string]float64{"nccl": 15, "cuda": 40}, f.Rows["allgather"][0].Peers)
	assert.Equal(t, int64(16<<10), f.Rows["reduce_scatter"][0].Bytes, "a reduce_scatter's bytes are the block a rank receives")
	require.Len(t, f.Rows["bcast"], 3, "a bcast's trace line has its source only")
	assert.Equal(t, int64(16<<10), f.Rows["bcast"][0].Bytes)
	assert.Equal(t, []int64{16 << 10, 32 << 10, 64 << 10}, []int64{f.Rows["reduce_scatter"][0].Bytes, f.Rows["reduce_scatter"][1].Bytes, f.Rows["reduce_scatter"][2].Bytes})

	// goring beat tl/cuda, UCC's pick for allgather, reduce_scatter and
	// bcast, at every size; allreduce is tl/nccl's (15 µs at 16 KiB beats goring).
	o := stdout.String()
	assert.Contains(t, o, "claims with layers ucp,nccl,cuda: allgather:cuda:0-262143:41#allreduce:cuda:32768-131071:41#bcast:cuda:0-131071:41#reduce_scatter:cuda:0-131071:41")
	assert.Contains(t, o, "note: allreduce forced on cuda ran elsewhere, not counted: 16KiB on tl/ucp, 32KiB on tl/ucp, 64KiB on tl/ucp")
	assert.Contains(t, o, "UCC_TL_GORING_CLAIMS="+out)

	// Two runs (trace, timed) for each collective and layer, each through
	// mpirun with -np and the forcing settings.
	launches, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(launches)), "\n")
	assert.Len(t, lines, 4*3*2)
	assert.Contains(t, lines[0], "-np 2 -x UCC_TLS=ucp,nccl -x UCC_TL_NCCL_TUNE=inf -x UCC_COLL_TRACE=info")
	assert.Contains(t, string(launches), "-x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=allreduce,allgather,reduce_scatter,bcast:cuda:inf")
	assert.Contains(t, lines[1], "-c allreduce -m cuda -d float32 -b 4096 -e 16384 -n 20 -w 5")

	// show prints the same decision from the file.
	stdout.Reset()
	require.Equal(t, 0, run([]string{"tune", "show", out}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "allgather:cuda:0-262143:41")
	// and model scores applies it as the team layer would.
	stdout.Reset()
	require.Equal(t, 0, run([]string{"model", "scores", "--np", "2", "--gpus", "2", "--gpu-model", "NVIDIA H200", "--claims", out}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "measured on this machine ("+out+")")
	assert.Contains(t, stdout.String(), "allreduce:cuda:32768-131071:41")
}

// Bad input is refused before anything runs, each with its reason.
func TestTuneUCCRefuses(t *testing.T) {
	dir, _ := fakeTools(t)
	base := []string{"tune", "ucc", "--launcher", filepath.Join(dir, "mpirun"), "--perftest", filepath.Join(dir, "ucc_perftest"), "--gpu", "X", "--shared", "no"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--np", "1", "--out", "x"}, "--np 1"},
		{[]string{"--np", "2"}, "--out FILE"},
		{[]string{"--np", "2", "--out", "x", "--layers", "mpi"}, `--layers: "mpi"`},
		{[]string{"--np", "2", "--out", "x", "--colls", "alltoall"}, `--colls: "alltoall"`},
		{[]string{"--np", "2", "--out", "x", "--min", "24K"}, "a power of 2"},
		{[]string{"--np", "2", "--out", "x", "--shared", "maybe"}, `--shared "maybe"`},
		{[]string{"--np", "2", "--out", "x", "--perftest", "/nonexistent/ucc_perftest"}, "--perftest"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append(append([]string{}, base...), c.args...), &stdout, &stderr)
		assert.Equal(t, 1, code, "%v", c.args)
		assert.Contains(t, stderr.String(), c.want, "%v", c.args)
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"tune", "show", "/nonexistent.json"}, &stdout, &stderr))
	require.Equal(t, 1, run([]string{"model", "scores", "--np", "2", "--gpus", "2", "--claims", "x.json"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--claims needs --gpu-model")
}

// Without a CUDA driver, tune ucc needs one to name the GPUs (no --gpu)
// or to count them (--shared auto): exit 3, as every command where a
// driver is needed (docs/contracts.md "CLI"), and one line naming why.
func TestTuneUCCWithoutDriverExits3(t *testing.T) {
	if _, err := cuda.DeviceCount(); !cuda.IsNoDriver(err) {
		t.Skip("a CUDA driver is present")
	}
	dir, _ := fakeTools(t)
	base := []string{"tune", "ucc", "--np", "2", "--out", filepath.Join(t.TempDir(), "c.json"),
		"--launcher", filepath.Join(dir, "mpirun"), "--perftest", filepath.Join(dir, "ucc_perftest")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--gpu NAME: no CUDA driver"},
		{[]string{"--gpu", "NVIDIA H200"}, "--shared auto: no CUDA driver"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append(append([]string{}, base...), c.args...), &stdout, &stderr)
		assert.Equal(t, 3, code, "%v: %s", c.args, stderr.String())
		assert.Empty(t, stdout.String(), "%v", c.args)
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%v: one line: %q", c.args, stderr.String())
		assert.Contains(t, stderr.String(), c.want, "%v", c.args)
	}
}
