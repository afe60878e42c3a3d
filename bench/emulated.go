package bench

import (
	"fmt"

	"github.com/goring-hpc/goring/topo"
)

// EmulatedTopology is the topology of a job of np ranks on one host that
// names none (goring bench without --topo): nodes nodes (0: one) of
// np/nodes GPUs each, topo.Synthetic's clusterB-like nodes (full NVLink
// mesh, one NIC rail per GPU), so the hierarchical algorithms have nodes
// and rails to work with, and the plans are those the team layer makes
// for the same shape.
func EmulatedTopology(nodes, np int) (*topo.Topology, error) {
	if nodes == 0 {
		nodes = 1
	}
	if nodes < 0 || np%nodes != 0 {
		return nil, fmt.Errorf("--np %d does not split into --nodes %d equal nodes", np, nodes)
	}
	gpus := np / nodes
	return topo.Synthetic(fmt.Sprintf("emulated-%dx%d", nodes, gpus), nodes, gpus, 1)
}
