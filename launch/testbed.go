package launch

import "fmt"

// The network-namespace testbed (tests/netns/testbed.sh, docs/netns.md):
// node k is namespace PREFIX-nodek, and its rail r has the address
// 198.18.r.(k+1).

// TestbedCoordAddr is where a testbed job's coordinator listens: node 0's
// address on rail 0, which every node reaches.
const TestbedCoordAddr = "198.18.0.1:0"

// TestbedNetns is the namespace of node k of the testbed prefix.
func TestbedNetns(prefix string, k int) string { return fmt.Sprintf("%s-node%d", prefix, k) }

// OnTestbed makes j a job on the testbed prefix: node k's ranks (ppn a
// node, in rank order) start in its namespace, and the coordinator listens
// on node 0's rail 0.
func (j *LocalJob) OnTestbed(prefix string, ppn int) {
	j.Netns = func(rank int) string { return TestbedNetns(prefix, rank/ppn) }
	j.CoordNetns = TestbedNetns(prefix, 0)
	j.CoordAddr = TestbedCoordAddr
}
