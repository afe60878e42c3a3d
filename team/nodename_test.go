package team

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A rank's node is its host and its network namespace.
func TestNodeNameIsHostAndNetworkNamespace(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	ns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		require.Equal(t, host, nodeName(), "without /proc, the host's name alone")
		return
	}
	require.Equal(t, host+"/"+ns, nodeName())
}

// envPrintNodeName makes the test binary print its nodeName and exit
// (TestNodeNamePrint), for a run inside another namespace.
const envPrintNodeName = "GORING_TEST_PRINT_NODE_NAME"

func TestNodeNamePrint(t *testing.T) {
	if os.Getenv(envPrintNodeName) == "" {
		t.Skip("only as the child of TestNodeNameDiffersAcrossNetworkNamespaces")
	}
	fmt.Printf("node=%s\n", nodeName())
}

// Two processes of one host in different network namespaces (the
// testbed's nodes) are different nodes; in the same one, the same node.
func TestNodeNameDiffersAcrossNetworkNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
	ns := fmt.Sprintf("gnn%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Skipf("ip netns add refused here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", ns).Run() })
	child := func(args ...string) string {
		cmd := exec.Command(args[0], append(args[1:], "-test.run", "^TestNodeNamePrint$", "-test.v")...)
		cmd.Env = append(os.Environ(), envPrintNodeName+"=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, l := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "node="); ok {
				return v
			}
		}
		t.Fatalf("no node name in %s", out)
		return ""
	}
	here := child(os.Args[0])
	require.Equal(t, nodeName(), here, "same namespace, same node")
	there := child("ip", "netns", "exec", ns, os.Args[0])
	require.NotEqual(t, here, there, "another namespace of this host is another node")
	host, _ := os.Hostname()
	require.True(t, strings.HasPrefix(there, host+"/"), "still this host's name: %s", there)
}
