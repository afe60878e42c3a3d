package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The CI's small version of the testbed (docs/netns.md): 2 nodes x 2 rails
// x 2 ranks, when this machine lets the test make network namespaces
// (root, iproute2); skipped with the reason otherwise. The testbed is
// always torn down.

// netnsTestbed brings up a testbed of nodes x rails for the test and tears
// it down at cleanup; it skips the test when namespaces cannot be made.
func netnsTestbed(t *testing.T, nodes, rails int, rate string) string {
	t.Helper()
	needUCX(t)
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (apt-get install iproute2): %v", tool, err)
		}
	}
	prefix := fmt.Sprintf("gnt%d", os.Getpid()%100000)
	probe := prefix + "-probe"
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace here: %v: %s", err, bytes.TrimSpace(out))
	}
	_ = exec.Command("ip", "netns", "delete", probe).Run()
	script, err := filepath.Abs("../../tests/netns/testbed.sh")
	require.NoError(t, err)
	env := append(os.Environ(), "PREFIX="+prefix, fmt.Sprintf("NODES=%d", nodes), fmt.Sprintf("RAILS=%d", rails), "RATE="+rate)
	down := func() {
		cmd := exec.Command(script, "down")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("testbed down: %v: %s", err, out)
		}
	}
	t.Cleanup(down)
	cmd := exec.Command(script, "up")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil && kernelLacks.Match(out) {
		// Namespaces but no veth, bridge or tbf in this kernel: the
		// machine cannot host the testbed, which is not goring's fault.
		t.Skipf("this kernel cannot build the testbed: %s", bytes.TrimSpace(out))
	}
	require.NoError(t, err, "testbed up: %s", out)
	return prefix
}

// kernelLacks matches what iproute2 and tc say when the kernel has no
// support for a device or qdisc kind the testbed needs.
var kernelLacks = regexp.MustCompile(`(?i)operation not supported|unknown device type|qdisc kind is unknown|not supported by the kernel`)

var predictionRow = regexp.MustCompile(`(?m)^parallel_rings +1048576 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$`)

func TestBenchNetnsSmall(t *testing.T) {
	prefix := netnsTestbed(t, 2, 2, "1gbit")
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Run("allgather validated with its prediction", func(t *testing.T) {
		out := netnsBench(t, exe, prefix, "allgather", "--alg", "parallel_rings", "--bytes", "1MiB")
		assert.Contains(t, out, "4 ranks, 2 nodes (testbed-2x2x2)")
		assert.Contains(t, out, "validated")
		assert.Contains(t, out, "# prediction: goring sim on testbed-2x2x2 (rail 0.125 GB/s")
		assert.Regexp(t, predictionRow, out)
		// Each rail carried its share: rail r's device counted bytes.
		for r := 0; r < 2; r++ {
			tc, err := exec.Command("tc", "-s", "-n", prefix+"-node0", "qdisc", "show", "dev", fmt.Sprintf("rail%d", r)).CombinedOutput()
			require.NoError(t, err)
			m := regexp.MustCompile(`Sent (\d+) bytes`).FindSubmatch(tc)
			require.NotNil(t, m, "%s", tc)
			assert.Greater(t, len(m[1]), 6, "rail %d sent megabytes (4 iterations x 1 MiB): %s", r, m[1])
		}
	})
	t.Run("dispatch and combine validated, the relay putting fewer bytes on the rails", func(t *testing.T) {
		// MultiWrite's relay crosses once a node where unicast crosses
		// once a destination rank: the rails' counters must show it, in
		// the ratio the plans predict (top-8 of 64 experts on 4 ranks).
		routing := []string{"--tokens", "96", "--hidden-bytes", "7168", "--topk", "8", "--experts", "64"}
		tb := cliOutput(t, exe, "topo", "testbed", "--nodes", "2", "--ppn", "2", "--rails", "2", "--json")
		tbFile := filepath.Join(t.TempDir(), "testbed.json")
		require.NoError(t, os.WriteFile(tbFile, tb, 0o644))
		sent, planned := map[string]float64{}, map[string]float64{}
		for _, alg := range []string{"unicast", "multiwrite", "nimble"} {
			for _, c := range []string{"dispatch", "combine"} {
				before := railBytes(t, prefix)
				out := netnsBench(t, exe, prefix, c, append([]string{"--alg", alg, "--dtype", "bfloat16"}, routing...)...)
				sent[alg] += float64(railBytes(t, prefix) - before)
				assert.Contains(t, out, "validated", "%s %s", c, alg)
				assert.Regexp(t, regexp.MustCompile(`(?m)^`+alg+` +96 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$`), out, "%s's prediction row", c)
				plan := cliOutput(t, exe, append([]string{"plan", c, "--alg", alg, "--topo", tbFile, "--dtype", "bfloat16"}, routing...)...)
				m := regexp.MustCompile(`; (\d+) bytes cross nodes`).FindSubmatch(plan)
				require.NotNil(t, m, "%s", plan)
				b, _ := strconv.ParseFloat(string(m[1]), 64)
				planned[alg] += b
			}
		}
		want := planned["multiwrite"] / planned["unicast"]
		require.Less(t, want, 0.7, "the routing must give the relay something to save: %v", planned)
		assert.InDelta(t, want, sent["multiwrite"]/sent["unicast"], 0.05, "multiwrite's rail bytes over unicast's, measured %v, planned %v", sent, planned)
		assert.InDelta(t, 1, sent["nimble"]/sent["unicast"], 0.05, "nimble moves unicast's bytes: %v", sent)
	})
	t.Run("lanes on rails validated with their prediction", func(t *testing.T) {
		// Lane w on rail w (Multi-lane, §3): a ring allreduce of odd size
		// whose lanes' parts differ, every lane's contents checked, and
		// both rails of node 0 carrying bytes of rank 0's lanes.
		out := netnsBench(t, exe, prefix, "allreduce", "--alg", "ring", "--lanes", "2", "--bytes", "1000004")
		assert.Contains(t, out, "lanes 2, validated")
		assert.Regexp(t, regexp.MustCompile(`(?m)^ring/L2 +1000004 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$`), out)
	})
	t.Run("a killed node's rank is named within 10 s", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd, stdout, stderr, ranks := startBenchRanks(t, ctx, exe, 4, "bench", "allgather", "--alg", "ring", "--netns", prefix, "--nodes", "2", "--ppn", "2",
			"--bytes", "64KiB", "--iters", "1000000", "--warmup", "0")
		time.Sleep(2 * time.Second) // well into the timed loop
		const victim = 2            // node 1's first rank
		require.NoError(t, syscall.Kill(ranks[victim], syscall.SIGKILL))
		killed := time.Now()
		err := cmd.Wait()
		elapsed := time.Since(killed)
		require.Error(t, err, "the launcher must fail")
		assert.Less(t, elapsed, 10*time.Second)
		assert.Contains(t, stderr.String(), fmt.Sprintf("goring: rank %d failed", victim), stderr.String())
		for r := 0; r < 4; r++ {
			if r != victim {
				assert.Contains(t, stderr.String(), fmt.Sprintf("goring: rank %d: rank %d failed", r, victim), "rank %d", r)
			}
		}
		assert.False(t, strings.Contains(stdout.String(), "# prediction"))
	})
}

// netnsBench runs goring bench COLL on the testbed PREFIX, 2 nodes of 2
// ranks, 3 validated iterations after 1, with the extra flags, and returns
// its stdout (the run must succeed within a minute).
func netnsBench(t *testing.T, exe, prefix, coll string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"bench", coll, "--netns", prefix, "--nodes", "2", "--ppn", "2", "--iters", "3", "--warmup", "1", "--validate"}, flags...)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), envRunCLI+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	return stdout.String()
}

// cliOutput runs the CLI (this test binary as goring) and returns its
// standard output.
func cliOutput(t *testing.T, exe string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envRunCLI+"=1")
	out, err := cmd.Output()
	require.NoError(t, err, "goring %s", strings.Join(args, " "))
	return out
}

// railBytes is what every rail of every node of the test's testbed (2
// nodes x 2 rails) has sent so far: testbed.sh's own count.
func railBytes(t *testing.T, prefix string) int64 {
	t.Helper()
	script, err := filepath.Abs("../../tests/netns/testbed.sh")
	require.NoError(t, err)
	cmd := exec.Command(script, "sent", "total")
	cmd.Env = append(os.Environ(), "PREFIX="+prefix, "NODES=2", "RAILS=2")
	out, err := cmd.Output()
	require.NoError(t, err, "testbed.sh sent total")
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	require.NoError(t, err, "testbed.sh sent total: %q", out)
	return n
}
