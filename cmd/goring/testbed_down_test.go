package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run killed mid-way can leave a rank behind inside its node's
// namespace, one that may even ignore SIGTERM. The testbed's down must
// still leave no namespace, no veth and no process of its own behind.
func TestTestbedDownAfterAKilledRun(t *testing.T) {
	prefix := netnsTestbed(t, 2, 1, "1gbit")
	script, err := filepath.Abs("../../tests/netns/testbed.sh")
	require.NoError(t, err)
	env := append(os.Environ(), "PREFIX="+prefix, "NODES=2", "RAILS=1", "RATE=1gbit")
	// A leftover rank: it ignores SIGTERM and outlives the shell that
	// started it (its own session, as a rank whose launcher was killed).
	rank := exec.Command(script, "run", "1", "bash", "-c", `trap "" TERM; exec -a goring-leftover-rank sleep 300`)
	rank.Env = env
	rank.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, rank.Start())
	done := make(chan struct{})
	go func() { _ = rank.Wait(); close(done) }()
	require.Eventually(t, func() bool {
		out, _ := exec.Command("ip", "netns", "pids", prefix+"-node1").Output()
		return len(strings.TrimSpace(string(out))) > 0
	}, 5*time.Second, 50*time.Millisecond, "the leftover rank never started in its namespace")

	down := exec.Command(script, "down")
	down.Env = env
	out, err := down.CombinedOutput()
	require.NoError(t, err, "testbed down: %s", out)

	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = rank.Process.Kill()
		t.Fatal("the rank inside the namespace still runs after down")
	}
	ns, err := exec.Command("ip", "netns", "list").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(ns), prefix+"-", "namespaces left behind")
	links, err := exec.Command("ip", "-o", "link").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(links), prefix, "veths left behind")
}
