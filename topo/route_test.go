package topo

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoSocketNode is a clusterA-like node written out by hand so the routing
// tests do not depend on preset figures: NVLink pairs 0-1 and 2-3, GPUs 0,1
// on socket 0 and 2,3 on socket 1, one NIC per socket.
func twoSocketNode() Node {
	return Node{
		Name:    "n",
		Sockets: 2,
		GPUs: []GPU{
			{Index: 0, Socket: 0, Rail: 0}, {Index: 1, Socket: 0, Rail: 0},
			{Index: 2, Socket: 1, NUMA: 1, Rail: 1}, {Index: 3, Socket: 1, NUMA: 1, Rail: 1},
		},
		NICs: []NICPort{{Index: 0, Socket: 0}, {Index: 1, Socket: 1}},
		Links: []Link{
			/*0*/ {Kind: NVLink, A: "gpu:0", B: "gpu:1", Count: 4, AlphaUS: 1, BetaGBps: 25, FullDuplex: true},
			/*1*/ {Kind: NVLink, A: "gpu:2", B: "gpu:3", Count: 4, AlphaUS: 1, BetaGBps: 25, FullDuplex: true},
			/*2*/ {Kind: PCIe, A: "gpu:0", B: "host:0", Count: 1, AlphaUS: 2, BetaGBps: 24, FullDuplex: true},
			/*3*/ {Kind: PCIe, A: "gpu:1", B: "host:0", Count: 1, AlphaUS: 2, BetaGBps: 24, FullDuplex: true},
			/*4*/ {Kind: PCIe, A: "gpu:2", B: "host:1", Count: 1, AlphaUS: 2, BetaGBps: 24, FullDuplex: true},
			/*5*/ {Kind: PCIe, A: "host:1", B: "gpu:3", Count: 1, AlphaUS: 2, BetaGBps: 24, FullDuplex: true},
			/*6*/ {Kind: UPI, A: "host:0", B: "host:1", Count: 2, AlphaUS: 0.5, BetaGBps: 20, FullDuplex: true},
			/*7*/ {Kind: PCIe, A: "nic:0", B: "host:0", Count: 1, AlphaUS: 1, BetaGBps: 24, FullDuplex: true},
			/*8*/ {Kind: PCIe, A: "nic:1", B: "host:1", Count: 1, AlphaUS: 1, BetaGBps: 24, FullDuplex: true},
			/*9*/ {Kind: NIC, A: "nic:0", B: "rail:0", Count: 1, AlphaUS: 2, BetaGBps: 12.5, FullDuplex: true},
			/*10*/ {Kind: NIC, A: "nic:1", B: "rail:1", Count: 1, AlphaUS: 2, BetaGBps: 12.5, FullDuplex: true},
		},
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in    string
		kind  string
		index int
		bad   bool
	}{
		/*0*/ {in: "gpu:0", kind: "gpu", index: 0},
		/*1*/ {in: "host:12", kind: "host", index: 12},
		/*2*/ {in: "switch:3", kind: "switch"},
		/*3*/ {in: "nic:7", kind: "nic", index: 7},
		/*4*/ {in: "rail:1", kind: "rail", index: 1},
		/*5*/ {in: "gpu", bad: true},
		/*6*/ {in: "gpu:", bad: true},
		/*7*/ {in: "gpu:-1", bad: true},
		/*8*/ {in: "gpu:01", bad: true},
		/*9*/ {in: "cpu:0", bad: true},
		/*10*/ {in: "gpu:1x", bad: true},
		/*11*/ {in: "gpu:99999999", bad: true},
		/*12*/ {in: "", bad: true},
		/*13*/ {in: "GPU:0", bad: true},
	}
	for i, tt := range tests {
		k, idx, err := ParseEndpoint(tt.in)
		if tt.bad {
			assert.Error(t, err, "case %d %q", i, tt.in)
			continue
		}
		require.NoError(t, err, "case %d", i)
		if tt.kind == "switch" {
			tt.index = 3
		}
		assert.Equal(t, tt.kind, k, "case %d", i)
		assert.Equal(t, tt.index, idx, "case %d", i)
	}
	// The builders round-trip through the parser.
	for i, s := range []string{GPUEndpoint(5), HostEndpoint(1), SwitchEndpoint(0), NICEndpoint(3), RailEndpoint(2)} {
		k, idx, err := ParseEndpoint(s)
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, s, fmt.Sprintf("%s:%d", k, idx), "case %d", i)
	}
}

func TestDirectLinks(t *testing.T) {
	n := twoSocketNode()
	n.Links = append(n.Links, Link{Kind: PCIe, A: "gpu:1", B: "gpu:0", Count: 1, AlphaUS: 1, BetaGBps: 1})
	assert.Equal(t, []int{0, 11}, n.DirectLinks("gpu:0", "gpu:1"))
	assert.Equal(t, []int{0, 11}, n.DirectLinks("gpu:1", "gpu:0"))
	assert.Equal(t, []int{5}, n.DirectLinks("gpu:3", "host:1"))
	assert.Empty(t, n.DirectLinks("gpu:0", "gpu:2"))
}

func TestRoute(t *testing.T) {
	n := twoSocketNode()
	tests := []struct {
		from, to string
		want     []Hop
	}{
		/*0*/ {"gpu:0", "gpu:1", []Hop{{0, true}}},
		/*1*/ {"gpu:1", "gpu:0", []Hop{{0, false}}},
		// Cross-socket: PCIe up, UPI across, PCIe down (the Multi-path model paper's
		// cross-socket host path); not through GPU 1 or 3.
		/*2*/ {"gpu:0", "gpu:3", []Hop{{2, true}, {6, true}, {5, true}}},
		/*3*/ {"gpu:3", "gpu:0", []Hop{{5, false}, {6, false}, {2, false}}},
		/*4*/ {"gpu:2", "host:1", []Hop{{4, true}}},
		/*5*/ {"gpu:2", "host:0", []Hop{{4, true}, {6, false}}},
		/*6*/ {"gpu:1", "rail:0", []Hop{{3, true}, {7, false}, {9, true}}},
		/*7*/ {"rail:1", "gpu:3", []Hop{{10, false}, {8, true}, {5, true}}},
		/*8*/ {"gpu:0", "rail:1", []Hop{{2, true}, {6, true}, {8, false}, {10, true}}},
		/*9*/ {"gpu:2", "gpu:2", []Hop{}},
		/*10*/ {"host:0", "nic:0", []Hop{{7, false}}},
	}
	for i, tt := range tests {
		got, err := n.Route(tt.from, tt.to)
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, tt.want, got, "case %d %s->%s", i, tt.from, tt.to)
		assertConnected(t, &n, tt.from, tt.to, got, i)
	}
}

// assertConnected walks the hops and checks they chain from -> to.
func assertConnected(t *testing.T, n *Node, from, to string, hops []Hop, caseNo int) {
	t.Helper()
	at := from
	for _, h := range hops {
		l := n.Links[h.Link]
		src, dst := l.A, l.B
		if !h.Forward {
			src, dst = dst, src
		}
		require.Equal(t, at, src, "case %d: hop %+v does not start at %s", caseNo, h, at)
		at = dst
	}
	assert.Equal(t, to, at, "case %d: route ends at %s", caseNo, at)
}

func TestRoutePrefersWidestAmongShortest(t *testing.T) {
	// Two switch planes between GPU 0 and GPU 1; plane 1 is wider, and a
	// one-hop slow link would win on hop count over both.
	n := Node{Name: "w", Sockets: 1, GPUs: []GPU{{Index: 0}, {Index: 1}}, Links: []Link{
		/*0*/ {Kind: NVSwitch, A: "gpu:0", B: "switch:0", Count: 2, AlphaUS: 1, BetaGBps: 25},
		/*1*/ {Kind: NVSwitch, A: "gpu:1", B: "switch:0", Count: 2, AlphaUS: 1, BetaGBps: 25},
		/*2*/ {Kind: NVSwitch, A: "gpu:0", B: "switch:1", Count: 4, AlphaUS: 1, BetaGBps: 25},
		/*3*/ {Kind: NVSwitch, A: "switch:1", B: "gpu:1", Count: 4, AlphaUS: 1, BetaGBps: 25},
		/*4*/ {Kind: NVSwitch, A: "gpu:0", B: "switch:2", Count: 4, AlphaUS: 1, BetaGBps: 25},
		/*5*/ {Kind: NVSwitch, A: "switch:2", B: "gpu:1", Count: 4, AlphaUS: 1, BetaGBps: 25},
	}}
	got, err := n.Route("gpu:0", "gpu:1")
	require.NoError(t, err)
	// Planes 1 and 2 tie on width; the smaller hop sequence (plane 1) wins.
	assert.Equal(t, []Hop{{2, true}, {3, true}}, got)
	a, b := n.PathCost(got)
	assert.Equal(t, 2.0, a)
	assert.Equal(t, 100.0, b)

	n.Links = append(n.Links, Link{Kind: PCIe, A: "gpu:1", B: "gpu:0", Count: 1, AlphaUS: 5, BetaGBps: 1})
	got, err = n.Route("gpu:0", "gpu:1")
	require.NoError(t, err)
	assert.Equal(t, []Hop{{6, false}}, got)
}

func TestRouteErrors(t *testing.T) {
	n := twoSocketNode()
	tests := []struct{ from, to, msg string }{
		/*0*/ {"gpu:0", "gpu:9", `no route from gpu:0 to gpu:9: gpu:9 is on no link`},
		/*1*/ {"gpu:x", "gpu:1", `route from gpu:x to gpu:1: endpoint "gpu:x"`},
		/*2*/ {"gpu:0", "bogus", `route from gpu:0 to bogus: endpoint "bogus"`},
	}
	for i, tt := range tests {
		_, err := n.Route(tt.from, tt.to)
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), tt.msg, "case %d", i)
	}
	// Islands: drop the UPI link; socket 0 cannot reach socket 1.
	n.Links = append(n.Links[:6:6], n.Links[7:]...)
	_, err := n.Route("gpu:0", "gpu:2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no route from gpu:0 to gpu:2")
	// Neither a NIC nor a GPU forwards between two PCIe/NVLink links: with
	// GPU 0's host link moved to NIC 0, host:0 is reachable from gpu:0 only
	// through nic:0 (PCIe to PCIe) or gpu:1 (NVLink to PCIe): no route.
	m := twoSocketNode()
	m.Links[2] = Link{Kind: PCIe, A: "gpu:0", B: "nic:0", Count: 1, AlphaUS: 1, BetaGBps: 24}
	_, err = m.Route("gpu:0", "host:0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no route from gpu:0 to host:0")
	// ... while the NIC still forwards PCIe onto its rail.
	hops, err := m.Route("gpu:0", "rail:0")
	require.NoError(t, err)
	assert.Equal(t, []Hop{{2, true}, {9, true}}, hops)
}

func TestPathCost(t *testing.T) {
	n := twoSocketNode()
	hops, err := n.Route("gpu:0", "gpu:3")
	require.NoError(t, err)
	a, b := n.PathCost(hops)
	assert.InDelta(t, 2+0.5+2, a, 1e-12)
	assert.InDelta(t, 24, b, 1e-12)
	a, b = n.PathCost(nil)
	assert.Equal(t, 0.0, a)
	assert.True(t, math.IsInf(b, 1))
}

func TestRailRoute(t *testing.T) {
	node := twoSocketNode()
	topo := &Topology{Name: "t", Nodes: []Node{node, node}, Rails: []Rail{
		{Index: 0, AlphaUS: 1, BetaGBps: 12.5}, {Index: 1, AlphaUS: 1, BetaGBps: 12.5},
	}}
	topo.Nodes[1].Name = "m"
	src, dst, err := topo.RailRoute(0, 1, 1, 2, 0)
	require.NoError(t, err)
	assertConnected(t, &topo.Nodes[0], "gpu:1", "rail:0", src, 0)
	assertConnected(t, &topo.Nodes[1], "rail:0", "gpu:2", dst, 1)
	a, b := topo.RailPathCost(0, src, 1, dst, 0)
	// src: pcie 2 + pcie 1 + nic 2; rail 1; dst: nic 2 + pcie 1 + upi 0.5 + pcie 2.
	assert.InDelta(t, 5+1+5.5, a, 1e-12)
	assert.InDelta(t, 12.5, b, 1e-12)

	bad := []struct {
		sn, sg, dn, dg, r int
		msg               string
	}{
		/*0*/ {2, 0, 0, 0, 0, "node 2 out of range"},
		/*1*/ {0, 4, 1, 0, 0, "node 0: GPU 4 out of range"},
		/*2*/ {0, 0, 1, -1, 0, "node 1: GPU -1 out of range"},
		/*3*/ {0, 0, 1, 0, 7, "no rail 7"},
	}
	for i, c := range bad {
		_, _, err := topo.RailRoute(c.sn, c.sg, c.dn, c.dg, c.r)
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), c.msg, "case %d", i)
	}
	a, b = topo.RailPathCost(0, src, 1, dst, 9)
	assert.True(t, math.IsNaN(a) && math.IsNaN(b))
}

func BenchmarkRoute(b *testing.B) {
	for _, c := range []struct{ preset, from, to string }{
		{"clusterA", "gpu:0", "gpu:3"},
		{"dgx-h100", "gpu:0", "rail:7"},
	} {
		p, err := Preset(c.preset)
		require.NoError(b, err)
		n := &p.Nodes[0]
		b.Run(c.preset, func(b *testing.B) {
			for b.Loop() {
				if _, err := n.Route(c.from, c.to); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestRouterMatchesRoute(t *testing.T) {
	for i, name := range PresetNames() {
		p, err := Preset(name)
		require.NoError(t, err)
		n := &p.Nodes[0]
		r := n.Router()
		ends := []string{"host:0", "rail:0", "switch:0", "nic:1", "gpu:9", "bad"}
		for _, g := range n.GPUs {
			ends = append(ends, GPUEndpoint(g.Index))
		}
		for _, a := range ends {
			for _, b := range ends {
				want, werr := n.Route(a, b)
				for rep := 0; rep < 2; rep++ { // computed, then cached
					got, gerr := r.Route(a, b)
					assert.Equal(t, want, got, "case %d %s %s->%s", i, name, a, b)
					assert.Equal(t, werr, gerr, "case %d %s %s->%s", i, name, a, b)
				}
				if werr == nil {
					wa, wb := n.PathCost(want)
					ga, gb := r.PathCost(want)
					assert.Equal(t, [2]float64{wa, wb}, [2]float64{ga, gb}, "case %d", i)
				}
			}
		}
		// A snapshot: later edits to the node do not leak in.
		before, _ := r.Route("gpu:0", "gpu:1")
		n.Links = nil
		after, err := r.Route("gpu:0", "gpu:1")
		require.NoError(t, err)
		assert.Equal(t, before, after, "case %d", i)
	}
}

func BenchmarkRouterCached(b *testing.B) {
	p, err := Preset("dgx-h100")
	require.NoError(b, err)
	r := p.Nodes[0].Router()
	for b.Loop() {
		if _, err := r.Route("gpu:0", "rail:7"); err != nil {
			b.Fatal(err)
		}
	}
}
