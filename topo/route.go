package topo

import (
	"fmt"
	"math"
)

// Hop is one link crossed by a route: Link indexes Node.Links, and Forward
// is true when the bytes travel from the link's A end to its B end.
type Hop struct {
	Link    int  `json:"link"`
	Forward bool `json:"forward"`
}

// Route returns the hops from endpoint from to endpoint to inside the node:
// the path with the fewest hops; among those, the one whose narrowest link
// (Link.BandwidthGBps) is widest; among those, a fixed choice (the search
// visits endpoints in sorted order and links in index order, and keeps the
// path whose hop sequence is smallest). from == to gives an empty route.
//
// What may be crossed on the way, not only at the ends:
//   - "host:S" and "switch:N" forward bytes (root complexes, socket links,
//     NVSwitch planes);
//   - "nic:R" forwards only between its network side (the "nic" link to
//     "rail:R") and a PCIe link: a NIC is not a PCIe bridge between a GPU
//     and host memory;
//   - "gpu:N" and "rail:R" never forward. A GPU that relays bytes is a
//     GPU-staged path, a choice the model makes explicitly (two routes), not
//     something routing should hide.
//
// The error names both endpoints when there is no route or one of them is
// malformed.
func (n *Node) Route(from, to string) ([]Hop, error) {
	return n.linkGraph().route(n.Name, from, to)
}

// linkGraph is a node's links as adjacency lists over numbered endpoints.
type linkGraph struct {
	links []Link
	id    map[string]int
	kind  []string // endpoint kind by id (KindGPU, ...)
	adj   [][]graphEdge
}

type graphEdge struct {
	link, to int
	forward  bool
}

func (n *Node) linkGraph() *linkGraph {
	g := &linkGraph{links: n.Links, id: make(map[string]int, len(n.Links))}
	node := func(e string) int {
		if i, ok := g.id[e]; ok {
			return i
		}
		k, _, _ := ParseEndpoint(e)
		g.id[e] = len(g.kind)
		g.kind = append(g.kind, k)
		g.adj = append(g.adj, nil)
		return len(g.kind) - 1
	}
	for i, l := range n.Links {
		if l.A == l.B {
			continue // a self-loop carries nothing anywhere (Validate rejects it)
		}
		a, b := node(l.A), node(l.B)
		g.adj[a] = append(g.adj[a], graphEdge{link: i, to: b, forward: true})
		g.adj[b] = append(g.adj[b], graphEdge{link: i, to: a, forward: false})
	}
	return g
}

func (g *linkGraph) route(nodeName, from, to string) ([]Hop, error) {
	for _, e := range [2]string{from, to} {
		if _, _, err := ParseEndpoint(e); err != nil {
			return nil, fmt.Errorf("node %q: route from %s to %s: %w", nodeName, from, to, err)
		}
	}
	if from == to {
		return []Hop{}, nil
	}
	src, ok1 := g.id[from]
	dst, ok2 := g.id[to]
	for _, c := range [2]struct {
		e  string
		ok bool
	}{{from, ok1}, {to, ok2}} {
		if !c.ok {
			return nil, fmt.Errorf("node %q: no route from %s to %s: %s is on no link", nodeName, from, to, c.e)
		}
	}

	// Breadth-first, one layer of hops at a time, so every endpoint is first
	// reached by a fewest-hop path; within a layer each endpoint keeps the
	// widest candidate (ties: the smaller hop sequence). That order is
	// total, so the result does not depend on the order of the search.
	best := make([]*partialRoute, len(g.kind))
	best[src] = &partialRoute{widthGBps: math.Inf(1)}
	layer := []int{src}
	var next []int
	for len(layer) > 0 {
		next = next[:0]
		for _, u := range layer {
			pu := best[u]
			for _, e := range g.adj[u] {
				if b := best[e.to]; b != nil && b.depth <= pu.depth {
					continue // reached in an earlier layer
				}
				l := &g.links[e.link]
				if u != src && !forwards(g.kind[u], pu.inKind, l.Kind) {
					continue
				}
				cand := &partialRoute{
					prev:      pu,
					hop:       Hop{Link: e.link, Forward: e.forward},
					depth:     pu.depth + 1,
					widthGBps: math.Min(pu.widthGBps, l.BandwidthGBps()),
					inKind:    l.Kind,
				}
				if cur := best[e.to]; cur == nil {
					best[e.to] = cand
					next = append(next, e.to)
				} else if cand.better(cur) {
					best[e.to] = cand
				}
			}
		}
		if r := best[dst]; r != nil {
			return r.hops(), nil
		}
		layer, next = next, layer
	}
	return nil, fmt.Errorf("node %q: no route from %s to %s", nodeName, from, to)
}

// partialRoute is the best route found so far to one endpoint, linked
// back to the route it extends.
type partialRoute struct {
	prev      *partialRoute
	hop       Hop
	depth     int
	widthGBps float64  // narrowest link so far
	inKind    LinkKind // kind of the last link (how the endpoint was entered)
}

func (p *partialRoute) hops() []Hop {
	out := make([]Hop, p.depth)
	for q := p; q.depth > 0; q = q.prev {
		out[q.depth-1] = q.hop
	}
	return out
}

// better orders routes of equal length: wider first, then by hop sequence
// (link index, then backward before forward).
func (p *partialRoute) better(q *partialRoute) bool {
	if p.widthGBps != q.widthGBps {
		return p.widthGBps > q.widthGBps
	}
	a, b := p.hops(), q.hops()
	for i := range a {
		if a[i].Link != b[i].Link {
			return a[i].Link < b[i].Link
		}
		if a[i].Forward != b[i].Forward {
			return !a[i].Forward
		}
	}
	return false
}

// forwards says whether bytes that entered an endpoint of the given kind
// (KindHost, ...) over a link of kind in may leave it over a link of kind
// out (see Route).
func forwards(kind string, in, out LinkKind) bool {
	switch kind {
	case KindHost, KindSwitch:
		return true
	case KindNIC:
		return (in == NIC) != (out == NIC)
	}
	return false
}

// PathCost sums the startup of every hop and finds the narrowest hop: the
// Hockney parameters of sending over the route as one pipelined transfer.
// An empty route costs nothing and has unbounded bandwidth (+Inf).
func (n *Node) PathCost(hops []Hop) (alphaUS, bottleneckGBps float64) {
	bottleneckGBps = math.Inf(1)
	for _, h := range hops {
		l := n.Links[h.Link]
		alphaUS += l.AlphaUS
		bottleneckGBps = math.Min(bottleneckGBps, l.BandwidthGBps())
	}
	return alphaUS, bottleneckGBps
}

// RailByIndex returns the rail with the given Index.
func (t *Topology) RailByIndex(r int) (Rail, bool) {
	for _, rl := range t.Rails {
		if rl.Index == r {
			return rl, true
		}
	}
	return Rail{}, false
}

// RailRoute routes a transfer from GPU srcGPU of node srcNode to GPU dstGPU
// of node dstNode over rail: src are the source node's hops from its GPU to
// "rail:R", dst the destination node's hops from "rail:R" to its GPU. The
// rail network between the two ports is t's Rail R (see RailPathCost).
func (t *Topology) RailRoute(srcNode, srcGPU, dstNode, dstGPU, rail int) (src []Hop, dst []Hop, err error) {
	for _, c := range [2][2]int{{srcNode, srcGPU}, {dstNode, dstGPU}} {
		if c[0] < 0 || c[0] >= len(t.Nodes) {
			return nil, nil, fmt.Errorf("topology %q: node %d out of range (0..%d)", t.Name, c[0], len(t.Nodes)-1)
		}
		if g := len(t.Nodes[c[0]].GPUs); c[1] < 0 || c[1] >= g {
			return nil, nil, fmt.Errorf("topology %q node %d: GPU %d out of range (0..%d)", t.Name, c[0], c[1], g-1)
		}
	}
	if _, ok := t.RailByIndex(rail); !ok {
		return nil, nil, fmt.Errorf("topology %q: no rail %d", t.Name, rail)
	}
	src, err = t.Nodes[srcNode].Route(GPUEndpoint(srcGPU), RailEndpoint(rail))
	if err != nil {
		return nil, nil, err
	}
	dst, err = t.Nodes[dstNode].Route(RailEndpoint(rail), GPUEndpoint(dstGPU))
	if err != nil {
		return nil, nil, err
	}
	return src, dst, nil
}

// RailPathCost is PathCost for a RailRoute: both nodes' hops plus the rail
// network between them (its AlphaUS is the switch and wire latency; its
// BetaGBps the port rate). A rail that does not exist gives (NaN, NaN).
func (t *Topology) RailPathCost(srcNode int, src []Hop, dstNode int, dst []Hop, rail int) (alphaUS, bottleneckGBps float64) {
	rl, ok := t.RailByIndex(rail)
	if !ok {
		return math.NaN(), math.NaN()
	}
	a1, b1 := t.Nodes[srcNode].PathCost(src)
	a2, b2 := t.Nodes[dstNode].PathCost(dst)
	return a1 + rl.AlphaUS + a2, math.Min(rl.BetaGBps, math.Min(b1, b2))
}
