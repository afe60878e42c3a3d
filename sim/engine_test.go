package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// testNode builds one node of n GPUs (socket 0) with the given links.
func testNode(n int, links ...topo.Link) topo.Node {
	nd := topo.Node{Name: "n", Sockets: 1, Links: links}
	for i := range n {
		nd.GPUs = append(nd.GPUs, topo.GPU{Index: i, Model: "H100", Rail: 0})
	}
	return nd
}

func link(kind topo.LinkKind, a, b string, count int, alphaUS, betaGBps float64) topo.Link {
	return topo.Link{Kind: kind, A: a, B: b, Count: count, AlphaUS: alphaUS, BetaGBps: betaGBps, FullDuplex: true}
}

// testPlan makes an empty plan for every GPU of t.
func testPlan(t *topo.Topology) *sched.Plan {
	p := &sched.Plan{Collective: coll.Allgather, Algorithm: "hand", Topology: t.Name, NRanks: t.NumGPUs()}
	for r := range p.NRanks {
		node, local, _ := t.Locate(r)
		p.Ranks = append(p.Ranks, sched.RankProgram{Rank: r, Node: node, Local: local})
	}
	return p
}

var (
	src = sched.Ref{Buf: sched.BufSrc}
	dst = sched.Ref{Buf: sched.BufDst}
)

// xfer adds a matching send (rank a) and recv (rank b) and returns their ids.
func xfer(p *sched.Plan, a, b, tag int, n int64, path sched.Path) (int, int) {
	return p.Ranks[a].Send(b, tag, src, n, path), p.Ranks[b].Recv(a, tag, dst, n)
}

func stepEnd(t *testing.T, r *Result, rank, step int) float64 {
	t.Helper()
	for _, s := range r.Steps {
		if s.Rank == rank && s.Step == step {
			return s.EndUS
		}
	}
	t.Fatalf("no timing for rank %d step %d", rank, step)
	return 0
}

func linkBytes(r *Result, name string) int64 {
	for _, l := range r.Links {
		if l.Name == name {
			return l.Bytes
		}
	}
	return 0
}

const mb = 1_000_000

func TestHandComputable(t *testing.T) {
	// GB/s = 1e3 bytes per microsecond, so 1 MB over 50 GB/s takes 20 us.
	star := func(n int) *topo.Topology { // n GPUs on one switch, 50 GB/s, 1 us per hop
		var ls []topo.Link
		for i := range n {
			ls = append(ls, link(topo.NVSwitch, fmt.Sprintf("gpu:%d", i), "switch:0", 2, 1, 25))
		}
		return &topo.Topology{Name: "star", Nodes: []topo.Node{testNode(n, ls...)}}
	}
	line := func() *topo.Topology { // 0-1-2 NVLink line plus a slow direct 0-2 link
		return &topo.Topology{Name: "line", Nodes: []topo.Node{testNode(3,
			link(topo.NVLink, "gpu:0", "gpu:1", 2, 1, 25),
			link(topo.NVLink, "gpu:1", "gpu:2", 2, 1, 25),
			link(topo.NVLink, "gpu:0", "gpu:2", 1, 1, 10),
		)}}
	}
	cases := []struct {
		name  string
		topo  func() *topo.Topology
		build func(p *sched.Plan)
		opt   Options
		want  float64 // total us
		check func(t *testing.T, r *Result)
	}{
		{
			name: "one transfer: alpha + n/beta",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "pair", Nodes: []topo.Node{testNode(2, link(topo.NVLink, "gpu:0", "gpu:1", 2, 1.5, 25))}}
			},
			build: func(p *sched.Plan) { xfer(p, 0, 1, 0, mb, sched.Path{}) },
			want:  1.5 + 20,
			check: func(t *testing.T, r *Result) {
				assert.Equal(t, int64(mb), linkBytes(r, "n nvlink gpu:0->gpu:1"))
				assert.Zero(t, linkBytes(r, "n nvlink gpu:1->gpu:0"), "full duplex: the reverse direction is idle")
				assert.Equal(t, "n nvlink gpu:0->gpu:1", r.Bottleneck)
				require.Len(t, r.Links, 1)
				assert.InDelta(t, 20, r.Links[0].BusyUS, 1e-9)
				assert.InDelta(t, 20/21.5, r.Links[0].Utilisation, 1e-9)
			},
		},
		{
			name: "two flows sharing a link: each at half rate",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "pair", Nodes: []topo.Node{testNode(2, link(topo.NVLink, "gpu:0", "gpu:1", 2, 1, 25))}}
			},
			build: func(p *sched.Plan) { xfer(p, 0, 1, 0, mb, sched.Path{}); xfer(p, 0, 1, 1, mb, sched.Path{}) },
			want:  1 + 40,
			check: func(t *testing.T, r *Result) {
				assert.InDelta(t, 41, stepEnd(t, r, 1, 0), 1e-9, "both end together")
				assert.InDelta(t, 41, stepEnd(t, r, 1, 1), 1e-9)
				assert.Equal(t, 2, r.Links[0].MaxFlows)
			},
		},
		{
			name: "staged path occupies both links",
			topo: line,
			build: func(p *sched.Plan) {
				xfer(p, 0, 2, 0, mb, sched.Path{Kind: sched.PathGPU, Index: 1}) // 0->1->2, alpha 2
				xfer(p, 1, 2, 0, mb, sched.Path{})                              // shares 1->2, alpha 1
			},
			// 1->2 carries both: from t=2 each gets 25 GB/s (the 1-only flow
			// runs alone at 50 from t=1 to t=2: 50 kB). Both then need
			// (1e6 + 0.95e6)/50e3 = 39 us of the shared link: ends at 41.
			want: 41,
			check: func(t *testing.T, r *Result) {
				assert.Equal(t, int64(mb), linkBytes(r, "n nvlink gpu:0->gpu:1"))
				assert.Equal(t, int64(2*mb), linkBytes(r, "n nvlink gpu:1->gpu:2"))
				assert.Zero(t, linkBytes(r, "n nvlink gpu:0->gpu:2"), "the hint overrides the direct link")
				assert.InDelta(t, 40, stepEnd(t, r, 2, 1), 1e-9, "the direct flow ends first: 50k at 50 then 950k at 25")
			},
		},
		{
			name:  "direct route prefers fewest hops even when narrower",
			topo:  line,
			build: func(p *sched.Plan) { xfer(p, 0, 2, 0, mb, sched.Path{}) },
			want:  1 + 100,
		},
		{
			name: "incast of three flows into one GPU",
			topo: func() *topo.Topology { return star(4) },
			build: func(p *sched.Plan) {
				for a := 1; a <= 3; a++ {
					xfer(p, a, 0, 0, mb, sched.Path{})
				}
			},
			// two hops of 1 us, then switch->gpu:0 carries 3 MB at 50 GB/s.
			want: 2 + 60,
			check: func(t *testing.T, r *Result) {
				assert.Equal(t, "n nvswitch switch:0->gpu:0", r.Bottleneck)
				assert.Equal(t, int64(3*mb), linkBytes(r, "n nvswitch switch:0->gpu:0"))
			},
		},
		{
			name: "max-min: a flow limited elsewhere leaves the rest to the other",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "mm", Nodes: []topo.Node{testNode(3,
					link(topo.NVLink, "gpu:0", "switch:0", 1, 0, 10),
					link(topo.NVLink, "gpu:1", "switch:0", 1, 0, 100),
					link(topo.NVLink, "gpu:2", "switch:0", 1, 0, 100),
				)}}
			},
			build: func(p *sched.Plan) {
				xfer(p, 0, 2, 0, mb, sched.Path{}) // limited to 10 by gpu0's link
				xfer(p, 1, 2, 0, mb, sched.Path{}) // gets the other 90
			},
			want: 100, // the slow flow: 1 MB at 10 GB/s (it speeds up to... no: 10 is its own cap)
			check: func(t *testing.T, r *Result) {
				assert.InDelta(t, 1e6/90e3, stepEnd(t, r, 2, 1), 1e-9)
			},
		},
		{
			name: "rendezvous: a send waits for its deps, then for the posted recv",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "pair", Nodes: []topo.Node{testNode(2, link(topo.NVLink, "gpu:0", "gpu:1", 2, 1, 25))}}
			},
			build: func(p *sched.Plan) {
				c := p.Ranks[0].Copy(src, dst, 3*mb)            // 3 + 3e6/1507.5e3 us
				p.Ranks[0].Send(1, 7, dst, mb, sched.Path{}, c) // after the copy
				c1 := p.Ranks[1].Copy(src, dst, 6*mb)           // the recv posts after this longer copy
				p.Ranks[1].Recv(0, 7, sched.Ref{Buf: sched.BufScratch}, mb, c1)
			},
			want: 3 + 6e6/1507.5e3 + 1 + 20,
			check: func(t *testing.T, r *Result) {
				for _, s := range r.Steps {
					if s.Rank == 0 && s.Step == 1 {
						assert.InDelta(t, 3+6e6/1507.5e3, s.StartUS, 1e-9, "the transfer starts when the later side posts")
					}
				}
			},
		},
		{
			name: "copy engine serialises outgoing transfers",
			topo: func() *topo.Topology { return star(3) },
			build: func(p *sched.Plan) {
				xfer(p, 0, 1, 0, mb, sched.Path{})
				xfer(p, 0, 2, 0, mb, sched.Path{})
			},
			opt: Options{CopyEngineSerial: true},
			// without serialisation both would share gpu0's uplink (2+40);
			// with it they go one after the other, each paying its startup.
			want: 2*2 + 2*20,
			check: func(t *testing.T, r *Result) {
				assert.InDelta(t, 22, stepEnd(t, r, 1, 0), 1e-9)
				assert.InDelta(t, 44, stepEnd(t, r, 2, 0), 1e-9)
			},
		},
		{
			name: "copy engine off: the same two sends share the uplink",
			topo: func() *topo.Topology { return star(3) },
			build: func(p *sched.Plan) {
				xfer(p, 0, 1, 0, mb, sched.Path{})
				xfer(p, 0, 2, 0, mb, sched.Path{})
			},
			want: 2 + 40,
		},
		{
			name: "inter-node transfer crosses the sender's and receiver's rail ports",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "two", Nodes: []topo.Node{testNode(1), testNode(1)},
					Rails: []topo.Rail{{Index: 0, AlphaUS: 2, BetaGBps: 25}}}
			},
			build: func(p *sched.Plan) { xfer(p, 0, 1, 0, mb, sched.Path{}) },
			want:  2 + 40,
			check: func(t *testing.T, r *Result) {
				assert.Equal(t, int64(mb), linkBytes(r, "n rail0 up"))
				assert.Len(t, r.Links, 2)
			},
		},
		{
			name: "an empty transfer costs its startup and loads no link",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "pair", Nodes: []topo.Node{testNode(2, link(topo.NVLink, "gpu:0", "gpu:1", 2, 1.5, 25))}}
			},
			build: func(p *sched.Plan) {
				a, b := xfer(p, 0, 1, 0, 0, sched.Path{})
				p.Ranks[0].Send(1, 1, src, mb, sched.Path{}, a)
				p.Ranks[1].Recv(0, 1, dst, mb, b)
			},
			want: 1.5 + 1.5 + 20,
			check: func(t *testing.T, r *Result) {
				require.Len(t, r.Links, 1)
				assert.InDelta(t, 20, r.Links[0].BusyUS, 1e-9)
			},
		},
		{
			name: "host-staged path crosses both PCIe links, not the NVLink",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "hs", Nodes: []topo.Node{testNode(2,
					link(topo.NVLink, "gpu:0", "gpu:1", 4, 1, 25),
					link(topo.PCIe, "gpu:0", "host:0", 1, 1, 25),
					link(topo.PCIe, "gpu:1", "host:0", 1, 1, 25),
				)}}
			},
			build: func(p *sched.Plan) { xfer(p, 0, 1, 0, mb, sched.Path{Kind: sched.PathHost}) },
			want:  2 + 40,
			check: func(t *testing.T, r *Result) {
				assert.Equal(t, int64(mb), linkBytes(r, "n pcie gpu:0->host:0"))
				assert.Equal(t, int64(mb), linkBytes(r, "n pcie host:0->gpu:1"))
				assert.Zero(t, linkBytes(r, "n nvlink gpu:0->gpu:1"))
			},
		},
		{
			name: "a rail hint picks the rail; the rail's startup is paid once",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "two", Nodes: []topo.Node{testNode(1), testNode(1)},
					Rails: []topo.Rail{{Index: 0, AlphaUS: 2, BetaGBps: 25}, {Index: 1, AlphaUS: 3, BetaGBps: 50}}}
			},
			build: func(p *sched.Plan) { xfer(p, 0, 1, 0, mb, sched.Path{Kind: sched.PathRail, Index: 1}) },
			want:  3 + 20,
			check: func(t *testing.T, r *Result) {
				assert.Equal(t, int64(mb), linkBytes(r, "n rail1 up"))
				assert.Equal(t, int64(mb), linkBytes(r, "n rail1 down"))
				assert.Zero(t, linkBytes(r, "n rail0 up"))
			},
		},
		{
			name: "a GPU with no rail takes the rail at its local index's position, whatever the rails' indices",
			topo: func() *topo.Topology {
				a, b := testNode(2), testNode(2)
				for _, n := range []*topo.Node{&a, &b} {
					for i := range n.GPUs {
						n.GPUs[i].Rail = topo.NoRail
					}
				}
				return &topo.Topology{Name: "sparse", Nodes: []topo.Node{a, b},
					Rails: []topo.Rail{{Index: 4, AlphaUS: 2, BetaGBps: 25}, {Index: 7, AlphaUS: 3, BetaGBps: 50}}}
			},
			// Local GPU 1 of node 0 to local GPU 1 of node 1: position 1,
			// rail 7.
			build: func(p *sched.Plan) { xfer(p, 1, 3, 0, mb, sched.Path{}) },
			want:  3 + 20,
			check: func(t *testing.T, r *Result) {
				assert.Equal(t, int64(mb), linkBytes(r, "n rail1 up"))
				assert.Zero(t, linkBytes(r, "n rail0 up"))
			},
		},
		{
			name: "matching pairs the k-th send with the k-th recv of the same tag",
			topo: func() *topo.Topology {
				return &topo.Topology{Name: "pair", Nodes: []topo.Node{testNode(2, link(topo.NVLink, "gpu:0", "gpu:1", 2, 0, 25))}}
			},
			build: func(p *sched.Plan) {
				a := p.Ranks[0].Send(1, 5, src, mb, sched.Path{})
				p.Ranks[0].Send(1, 5, src, 2*mb, sched.Path{}, a)
				p.Ranks[1].Recv(0, 5, dst, mb)
				p.Ranks[1].Recv(0, 5, dst, 2*mb)
			},
			want: 60,
		},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d %s", i, c.name), func(t *testing.T) {
			tp := c.topo()
			p := testPlan(tp)
			c.build(p)
			opt := c.opt
			opt.Timeline = true
			r, err := Simulate(tp, p, opt)
			require.NoError(t, err)
			assert.InDelta(t, c.want, r.TotalUS, 1e-6*c.want)
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func TestSimulateRejects(t *testing.T) {
	pair := &topo.Topology{Name: "pair", Nodes: []topo.Node{testNode(2, link(topo.NVLink, "gpu:0", "gpu:1", 1, 1, 25))}}
	cases := []struct {
		name  string
		build func(p *sched.Plan)
		want  string
	}{
		{"send without recv", func(p *sched.Plan) { p.Ranks[0].Send(1, 0, src, 8, sched.Path{}) }, "no matching recv"},
		{"recv without send", func(p *sched.Plan) { p.Ranks[1].Recv(0, 3, dst, 8) }, "no matching send"},
		{"length mismatch", func(p *sched.Plan) { p.Ranks[0].Send(1, 0, src, 8, sched.Path{}); p.Ranks[1].Recv(0, 0, dst, 16) }, "receives 16"},
		{"deadlock", func(p *sched.Plan) {
			r0 := p.Ranks[0].Recv(1, 0, dst, 8)
			p.Ranks[0].Send(1, 1, src, 8, sched.Path{}, r0)
			r1 := p.Ranks[1].Recv(0, 1, dst, 8)
			p.Ranks[1].Send(0, 0, src, 8, sched.Path{}, r1)
		}, "deadlock"},
		{"peer out of range", func(p *sched.Plan) { p.Ranks[0].Send(5, 0, src, 8, sched.Path{}) }, "out of range"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d %s", i, c.name), func(t *testing.T) {
			p := testPlan(pair)
			c.build(p)
			_, err := Simulate(pair, p, Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// A rail index or socket count far beyond what the node uses must not size
// the simulator's route cache: a valid topology with rail 3,000,000 (or a
// node claiming 100,000 sockets) asked for terabytes and killed the process.
func TestSparseIndicesSimulate(t *testing.T) {
	n := testNode(2, link(topo.NVLink, "gpu:0", "gpu:1", 1, 1, 25))
	n.Sockets = 100_000
	for i := range n.GPUs {
		n.GPUs[i].Rail = topo.NoRail
	}
	tp := &topo.Topology{Name: "sparse", Nodes: []topo.Node{n}, Rails: []topo.Rail{{Index: 3_000_000, AlphaUS: 1, BetaGBps: 1}}}
	require.NoError(t, tp.Validate())
	p := testPlan(tp)
	xfer(p, 0, 1, 0, mb, sched.Path{})
	r, err := Simulate(tp, p, Options{})
	require.NoError(t, err)
	assert.InDelta(t, 1+40, r.TotalUS, 1e-9)
}
