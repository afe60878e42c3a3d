package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moe_nccl.py's counts are goring's unicast dispatch counts (one row per
// token and destination rank, combine the transpose), its table divides
// NCCL's time by goring's, and it refuses to run with NVLink multicast on
// before it touches a GPU.
func TestMoENCCLScript(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	// 2 ranks, top-2 of 3 experts (0 and 1 on rank 0, 2 on rank 1).
	routing := `{"token_bytes":4,"topk":2,"tokens":[2,1],"experts":[0,1, 0,2, 2,1],"placement":[0,0,1]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r.json"), []byte(routing), 0o644))
	out, err := exec.Command(py, "-c", `import json,sys; sys.path.insert(0, "."); import moe_nccl as m
r = json.load(open(sys.argv[1])); rows = m.pair_rows(r)
print(rows, m.splits("dispatch", rows, 1), m.splits("combine", rows, 1))`, filepath.Join(dir, "r.json")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "[[2, 1], [1, 1]] ([1, 1], [1, 1]) ([1, 1], [1, 1])", strings.TrimSpace(string(out)))

	g := `{"results":[{"collective":"dispatch","algorithm":"unicast/n1","bytes":256,"avg_us":50},
	{"collective":"dispatch","algorithm":"nimble/n1","bytes":256,"avg_us":25}]}`
	n := `{"results":[{"collective":"dispatch","algorithm":"nccl","bytes":256,"avg_us":100}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g.json"), []byte(g), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "n.json"), []byte(n), 0o644))
	out, err = exec.Command(py, "moe_nccl.py", "table", "--goring", filepath.Join(dir, "g.json"), "--nccl", filepath.Join(dir, "n.json")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `dispatch\s+256\s+100.0\s+25.0\s+4.00\s+50.0\s+2.00`, string(out))

	cmd := exec.Command(py, "moe_nccl.py", "run", "--routing", filepath.Join(dir, "r.json"))
	cmd.Env = append(os.Environ(), "NCCL_NVLS_ENABLE=1")
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "set NCCL_NVLS_ENABLE=0")
}

// device_netns_moe.sh gives NCCL's ranks one NCCL_HOSTID a node unless a
// node's ranks share a GPU (MOE_NCCL_HOSTID=auto), where each rank gets
// its own (NCCL refuses two ranks of one host hash on one bus ID); node
// and rank force either, and anything else is refused.
func TestMoENCCLHostID(t *testing.T) {
	hostid := func(mode string, gpus, ppn, rank int) (string, error) {
		cmd := exec.Command("bash", "-c", `set -u; source ./device_netns_moe.sh; moe_nccl_hostid "$1" "$2"`, "-",
			strconv.Itoa(ppn), strconv.Itoa(rank))
		cmd.Env = append(os.Environ(), "MOE_NCCL_HOSTID="+mode, "GPUS="+strconv.Itoa(gpus))
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for _, c := range []struct {
		mode            string
		gpus, ppn, rank int
		want            string
	}{
		{"auto", 1, 4, 5, "goring-netns-node1-rank1"}, // 2 x 4 on one GPU
		{"auto", 1, 4, 3, "goring-netns-node0-rank3"},
		{"auto", 2, 2, 3, "goring-netns-node1"}, // 2 x 2 on two GPUs: a node's ranks apart
		{"auto", 1, 1, 1, "goring-netns-node1"},
		{"node", 1, 4, 5, "goring-netns-node1"},
		{"rank", 8, 4, 6, "goring-netns-node1-rank2"},
	} {
		got, err := hostid(c.mode, c.gpus, c.ppn, c.rank)
		require.NoError(t, err, "%+v: %s", c, got)
		assert.Equal(t, c.want, got, "%+v", c)
	}
	out, err := hostid("host", 1, 4, 0)
	require.Error(t, err)
	assert.Contains(t, out, "want node, rank or auto")
}

// moe_rails turns two `testbed.sh sent` listings into each rail's bytes a
// call, one line.
func TestMoERails(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before"), filepath.Join(dir, "after")
	require.NoError(t, os.WriteFile(before, []byte("node0/rail0 100\nnode0/rail1 50\nnode1/rail0 0\n"), 0o644))
	require.NoError(t, os.WriteFile(after, []byte("node0/rail0 700\nnode0/rail1 50\nnode1/rail0 1200\n"), 0o644))
	out, err := exec.Command("bash", "-c", `set -u; source ./device_netns_moe.sh; moe_rails "$1" "$2" 6`, "-", before, after).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "node0/rail0=100 node0/rail1=0 node1/rail0=200\n", string(out))
}
