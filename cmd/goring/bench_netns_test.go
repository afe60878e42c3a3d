package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
