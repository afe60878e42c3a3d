package topo

import (
	"fmt"
	"math"
	"sort"
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
	if _, _, err := ParseEndpoint(from); err != nil {
		return nil, fmt.Errorf("node %q: route from %s to %s: %w", n.Name, from, to, err)
	}
	if _, _, err := ParseEndpoint(to); err != nil {
		return nil, fmt.Errorf("node %q: route from %s to %s: %w", n.Name, from, to, err)
	}
	if from == to {
		return []Hop{}, nil
	}
	adj := make(map[string][]int, 2*len(n.Links))
	for i, l := range n.Links {
		if l.A == l.B {
			continue // a self-loop carries nothing anywhere (Validate rejects it)
		}
		adj[l.A] = append(adj[l.A], i)
		adj[l.B] = append(adj[l.B], i)
	}
	for _, e := range [2]string{from, to} {
		if len(adj[e]) == 0 {
			return nil, fmt.Errorf("node %q: no route from %s to %s: %s is on no link", n.Name, from, to, e)
		}
	}

	// Breadth-first, one layer of hops at a time, so every endpoint is first
	// reached by a fewest-hop path; within a layer each endpoint keeps the
	// widest candidate (ties: the smaller hop sequence).
	best := map[string]*partialRoute{from: {widthGBps: math.Inf(1)}}
	layer := []string{from}
	for len(layer) > 0 {
		next := map[string]*partialRoute{}
		for _, u := range layer {
			pu := best[u]
			for _, li := range adj[u] {
				l := &n.Links[li]
				v, fwd := l.B, true
				if l.A != u {
					v, fwd = l.A, false
				}
				if _, seen := best[v]; seen {
					continue
				}
				if u != from && !forwards(u, pu.inKind, l.Kind) {
					continue
				}
				cand := &partialRoute{
					hops:      append(append(make([]Hop, 0, len(pu.hops)+1), pu.hops...), Hop{Link: li, Forward: fwd}),
					widthGBps: math.Min(pu.widthGBps, l.BandwidthGBps()),
					inKind:    l.Kind,
				}
				if cur := next[v]; cur == nil || cand.better(cur) {
					next[v] = cand
				}
			}
		}
		if r, ok := next[to]; ok {
			return r.hops, nil
		}
		layer = layer[:0]
		for v, r := range next {
			best[v] = r
			layer = append(layer, v)
		}
		sort.Strings(layer)
	}
	return nil, fmt.Errorf("node %q: no route from %s to %s", n.Name, from, to)
}

// partialRoute is the best route found so far to one endpoint.
type partialRoute struct {
	hops      []Hop
	widthGBps float64  // narrowest link so far
	inKind    LinkKind // kind of the last link (how the endpoint was entered)
}

func (p *partialRoute) better(q *partialRoute) bool {
	if p.widthGBps != q.widthGBps {
		return p.widthGBps > q.widthGBps
	}
	for i := range p.hops {
		a, b := p.hops[i], q.hops[i]
		if a.Link != b.Link {
			return a.Link < b.Link
		}
		if a.Forward != b.Forward {
			return !a.Forward
		}
	}
	return false
}

// forwards says whether bytes that entered endpoint e over a link of kind in
// may leave it over a link of kind out (see Route).
func forwards(e string, in, out LinkKind) bool {
	kind, _, err := ParseEndpoint(e)
	if err != nil {
		return false
	}
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
