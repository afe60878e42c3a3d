package topo

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoNodes is clusterA repeated twice: the base each validation case breaks.
func twoNodes(t *testing.T) *Topology {
	t.Helper()
	p, err := Preset("clusterA")
	require.NoError(t, err)
	tp, err := p.Repeat(2)
	require.NoError(t, err)
	require.NoError(t, tp.Validate())
	return tp
}

// linkIndex finds the first link joining a and b on node 0.
func linkIndex(t *testing.T, tp *Topology, a, b string) int {
	t.Helper()
	ls := tp.Nodes[0].DirectLinks(a, b)
	require.NotEmpty(t, ls, "%s-%s", a, b)
	return ls[0]
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, tp *Topology)
		want   string
	}{
		/*0*/ {"no nodes", func(t *testing.T, tp *Topology) { tp.Nodes = nil }, `topology "clusterA": no nodes`},
		/*1*/ {"duplicate node names", func(t *testing.T, tp *Topology) { tp.Nodes[1].Name = "node0" },
			`topology "clusterA" node 1: duplicate node name "node0" (node 0 has it too)`},
		/*2*/ {"duplicate rail", func(t *testing.T, tp *Topology) { tp.Rails[2].Index = 1 },
			`rail at position 2: duplicate rail index 1`},
		/*3*/ {"negative rail index", func(t *testing.T, tp *Topology) { tp.Rails[0].Index = -1 },
			`rail at position 0: index -1 must not be negative`},
		/*4*/ {"rail zero bandwidth", func(t *testing.T, tp *Topology) { tp.Rails[3].BetaGBps = 0 },
			`topology "clusterA" rail 3: bandwidth 0 GB/s must be positive and finite`},
		/*5*/ {"rail negative alpha", func(t *testing.T, tp *Topology) { tp.Rails[0].AlphaUS = -1 },
			`rail 0: alpha -1 us must be finite and not negative`},
		/*6*/ {"sockets 0", func(t *testing.T, tp *Topology) { tp.Nodes[1].Sockets = 0 },
			`topology "clusterA" node 1 ("node1"): sockets 0: want at least 1`},
		/*7*/ {"no GPUs", func(t *testing.T, tp *Topology) { tp.Nodes[0].GPUs = nil }, `node 0 ("node0"): no GPUs`},
		/*8*/ {"duplicate GPU index", func(t *testing.T, tp *Topology) { tp.Nodes[0].GPUs[2].Index = 1 },
			`GPU at position 2: duplicate GPU index 1 (position 1 has it too)`},
		/*9*/ {"GPU index out of order", func(t *testing.T, tp *Topology) { tp.Nodes[0].GPUs[3].Index = 7 },
			`GPU at position 3 has index 7 (indices must be 0..3 in order)`},
		/*10*/ {"GPU socket out of range", func(t *testing.T, tp *Topology) { tp.Nodes[0].GPUs[3].Socket = 2 },
			`GPU 3: socket 2 out of range (0..1)`},
		/*11*/ {"GPU NUMA negative", func(t *testing.T, tp *Topology) { tp.Nodes[0].GPUs[0].NUMA = -2 },
			`GPU 0: NUMA node -2 must not be negative`},
		/*12*/ {"GPU NUMA out of range", func(t *testing.T, tp *Topology) {
			tp.Nodes[0].NUMANodes = 2
			tp.Nodes[0].GPUs[1].NUMA = 2
		}, `GPU 1: NUMA node 2 out of range (0..1)`},
		/*13*/ {"GPU rail names no rail", func(t *testing.T, tp *Topology) { tp.Nodes[1].GPUs[0].Rail = 4 },
			`node 1 ("node1"): GPU 0: rail 4 names no rail of the topology (-1: none)`},
		/*14*/ {"GPU rail below -1", func(t *testing.T, tp *Topology) { tp.Nodes[1].GPUs[0].Rail = -2 },
			`GPU 0: rail -2 names no rail`},
		/*15*/ {"duplicate NIC", func(t *testing.T, tp *Topology) { tp.Nodes[0].NICs[1].Index = 0 },
			`NIC at position 1: duplicate NIC index 0`},
		/*16*/ {"NIC names no rail", func(t *testing.T, tp *Topology) { tp.Nodes[0].NICs = append(tp.Nodes[0].NICs, NICPort{Index: 9}) },
			`NIC 9 names no rail of the topology`},
		/*17*/ {"NIC socket out of range", func(t *testing.T, tp *Topology) { tp.Nodes[0].NICs[3].Socket = 5 },
			`NIC 3: socket 5 out of range (0..1)`},
		/*18*/ {"link to unknown GPU", func(t *testing.T, tp *Topology) {
			tp.Nodes[0].Links[0].B = "gpu:4"
		}, `link 0 (nvlink gpu:0-gpu:4): endpoint gpu:4: GPU 4 out of range (0..3)`},
		/*19*/ {"link bad endpoint syntax", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[1].A = "gpu2" },
			`link 1 (nvlink gpu2-gpu:3): endpoint "gpu2": want KIND:INDEX`},
		/*20*/ {"link unknown endpoint kind", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[1].A = "cpu:0" },
			`endpoint "cpu:0": unknown kind "cpu"`},
		/*21*/ {"link to unknown socket", func(t *testing.T, tp *Topology) {
			tp.Nodes[0].Links[linkIndex(t, tp, "gpu:3", "host:1")].B = "host:2"
		}, `(pcie gpu:3-host:2): endpoint host:2: socket 2 out of range (0..1)`},
		/*22*/ {"link to unknown NIC", func(t *testing.T, tp *Topology) {
			tp.Nodes[0].Links[linkIndex(t, tp, "nic:1", "host:0")].A = "nic:6"
		}, `(pcie nic:6-host:0): endpoint nic:6: the node has no NIC 6`},
		/*23*/ {"link to unknown rail", func(t *testing.T, tp *Topology) {
			tp.Nodes[0].Links[linkIndex(t, tp, "nic:1", "rail:1")].B = "rail:8"
		}, `(nic nic:1-rail:8): endpoint rail:8: the topology has no rail 8`},
		/*24*/ {"nic link to the wrong rail", func(t *testing.T, tp *Topology) {
			tp.Nodes[0].Links[linkIndex(t, tp, "nic:1", "rail:1")].B = "rail:2"
		}, `(nic nic:1-rail:2): a rail endpoint needs a link of kind nic between nic:R and rail:R`},
		/*25*/ {"pcie link to a rail", func(t *testing.T, tp *Topology) {
			tp.Nodes[0].Links[linkIndex(t, tp, "gpu:0", "host:0")].B = "rail:0"
		}, `(pcie gpu:0-rail:0): a rail endpoint needs a link of kind nic`},
		/*26*/ {"self loop", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[0].B = "gpu:0" },
			`link 0 (nvlink gpu:0-gpu:0): both ends are gpu:0`},
		/*27*/ {"count 0", func(t *testing.T, tp *Topology) { tp.Nodes[1].Links[0].Count = 0 },
			`node 1 ("node1"): link 0 (nvlink gpu:0-gpu:1): count 0 must be at least 1`},
		/*28*/ {"negative count", func(t *testing.T, tp *Topology) { tp.Nodes[1].Links[0].Count = -3 }, `count -3 must be at least 1`},
		/*29*/ {"zero bandwidth", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[2].BetaGBps = 0 },
			`link 2 (pcie gpu:0-host:0): bandwidth 0 GB/s must be positive and finite`},
		/*30*/ {"negative bandwidth", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[2].BetaGBps = -5 }, `bandwidth -5 GB/s`},
		/*31*/ {"NaN bandwidth", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[2].BetaGBps = math.NaN() }, `bandwidth NaN GB/s`},
		/*32*/ {"Inf bandwidth", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[2].BetaGBps = math.Inf(1) }, `bandwidth +Inf GB/s`},
		/*33*/ {"negative alpha", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[2].AlphaUS = -0.5 },
			`link 2 (pcie gpu:0-host:0): alpha -0.5 us must be finite and not negative`},
		/*34*/ {"NaN alpha", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[2].AlphaUS = math.NaN() }, `alpha NaN us`},
		/*35*/ {"unknown kind", func(t *testing.T, tp *Topology) { tp.Nodes[0].Links[0].Kind = "ethernet" },
			`link 0 (ethernet gpu:0-gpu:1): unknown kind "ethernet"`},
		/*36*/ {"GPU cut off", func(t *testing.T, tp *Topology) {
			// Remove the UPI link: socket 0's GPUs cannot reach socket 1's.
			n := &tp.Nodes[1]
			i := linkIndex(t, tp, "host:0", "host:1")
			n.Links = append(n.Links[:i:i], n.Links[i+1:]...)
		}, `node 1 ("node1"): GPU 0 has no route to GPU 2`},
		/*37*/ {"GPU cut off from its rail", func(t *testing.T, tp *Topology) {
			n := &tp.Nodes[0]
			i := linkIndex(t, tp, "nic:2", "rail:2")
			n.Links = append(n.Links[:i:i], n.Links[i+1:]...)
		}, `GPU 2 has no route to its rail 2`},
		/*38*/ {"NIC index negative", func(t *testing.T, tp *Topology) { tp.Nodes[0].NICs[0].Index = -1 },
			`NIC -1 names no rail`},
	}
	for i, tt := range tests {
		tp := twoNodes(t)
		tt.break_(t, tp)
		err := tp.Validate()
		require.Error(t, err, "case %d %s", i, tt.name)
		assert.Contains(t, err.Error(), tt.want, "case %d %s", i, tt.name)
	}
}

func TestValidateAcceptsEveryPresetRepeated(t *testing.T) {
	for i, name := range PresetNames() {
		p, err := Preset(name)
		require.NoError(t, err, "case %d", i)
		for _, nodes := range []int{1, 2, 5} {
			tp, err := p.Repeat(nodes)
			require.NoError(t, err, "case %d", i)
			assert.NoError(t, tp.Validate(), "case %d %s x%d", i, name, nodes)
		}
	}
}
