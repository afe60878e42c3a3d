package team

import (
	"fmt"
	"os"

	"github.com/goring-hpc/goring/topo"
)

// nodeName is where a rank's card says it runs: the host's name, and the
// network namespace it reaches the network from. Ranks in one namespace
// of one host are one node, as always; ranks of one host in different
// namespaces are different nodes. That is how the network-namespace
// testbed (tests/netns/testbed.sh) makes nodes, each with its own rails,
// of the ranks of one machine: under mpirun, each rank started in its
// node's namespace (tests/netns/in_node.sh), the team layer then places
// them on nodes as it would on a cluster, and their messages to the other
// nodes go over rails. Without /proc, the host's name alone.
func nodeName() string {
	host, _ := os.Hostname()
	if ns, err := os.Readlink("/proc/self/ns/net"); err == nil {
		return host + "/" + ns
	}
	return host
}

// sayPlacement prints, with GORING_TEAM_PLACEMENT set, where the team
// placed its ranks (a diagnostic: which ranks it took for one node).
func sayPlacement(rank int, hosts []string, tp *topo.Topology) {
	if os.Getenv("GORING_TEAM_PLACEMENT") == "" || rank < 0 || rank >= len(hosts) {
		return
	}
	fmt.Fprintf(os.Stderr, "goring team: rank %d of %d, %d node(s) of %d rank(s); this rank's node %s\n",
		rank, len(hosts), tp.NumNodes(), len(hosts)/max(1, tp.NumNodes()), hosts[rank])
}
