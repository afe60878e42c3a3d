package launch

import (
	"fmt"
	"os"
)

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

// Testbed is a job's view of the testbed: its prefix and node count, and
// what the launcher finds on node 0 where the user gave nothing, so that
// every rank, handed the launcher's answers, builds the same job.
type Testbed struct {
	Prefix string
	Nodes  int
	Rails  int    // rails in use; 0: every railN device of node 0 (CountRails)
	Rate   string // one rail's tc rate; "": node 0's rail0 qdisc (RailRate)
}

// Missing is the first node namespace of tb that is not up ("" when all
// are): the testbed is brought up by tests/netns/testbed.sh, not here.
func (tb Testbed) Missing() string {
	for k := 0; k < tb.Nodes; k++ {
		if _, err := os.Stat(NetnsPath(TestbedNetns(tb.Prefix, k))); err != nil {
			return TestbedNetns(tb.Prefix, k)
		}
	}
	return ""
}

// Complete fills tb's rails and rate from node 0 where they are not
// given.
func (tb *Testbed) Complete() error {
	node0 := TestbedNetns(tb.Prefix, 0)
	if tb.Rails == 0 {
		r, err := CountRails(node0)
		if err != nil {
			return err
		}
		tb.Rails = r
	}
	if tb.Rate == "" {
		r, err := RailRate(node0)
		if err != nil {
			return err
		}
		tb.Rate = r
	}
	return nil
}
