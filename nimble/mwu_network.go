package nimble

import (
	"fmt"
	"slices"

	"github.com/goring-hpc/goring/topo"
)

// The planner's network: links with capacities from the topology, and the
// candidate paths of a demand (direct, 2-hop intra-node, rail-matched
// inter-node).

// mwuNet is the planner's view of the cluster: every directed link of
// every node (a half-duplex bundle is one link for both directions), plus
// an up and a down port per node and rail when the node does not describe
// its NIC ports as links to "rail:R" (as package sim does).
type mwuNet struct {
	t       *topo.Topology
	names   []string
	capGBps []float64
	ids     [][]int
	ports   map[[3]int]int   // (node, rail, 0 up / 1 down) -> id
	routes  map[[3]int][]int // (node, from, to) -> links; see epName
	hasRail map[[2]int]bool  // (node, rail): the node links "rail:R"
	first   []int            // first rank of node i
	nRails  int
}

func newMWUNet(t *topo.Topology) (*mwuNet, error) {
	nw := &mwuNet{t: t, ports: map[[3]int]int{}, nRails: len(t.Rails), routes: map[[3]int][]int{}, hasRail: map[[2]int]bool{}}
	r := 0
	for ni := range t.Nodes {
		node := &t.Nodes[ni]
		nw.first = append(nw.first, r)
		r += len(node.GPUs)
		ids := make([]int, 2*len(node.Links))
		for li, l := range node.Links {
			if l.BandwidthGBps() <= 0 {
				return nil, fmt.Errorf("mwu: node %d link %s-%s has no bandwidth", ni, l.A, l.B)
			}
			ids[2*li] = nw.add(fmt.Sprintf("node%d %s->%s", ni, l.A, l.B), l.BandwidthGBps())
			if l.FullDuplex {
				ids[2*li+1] = nw.add(fmt.Sprintf("node%d %s->%s", ni, l.B, l.A), l.BandwidthGBps())
			} else {
				ids[2*li+1] = ids[2*li]
			}
		}
		nw.ids = append(nw.ids, ids)
	}
	return nw, nil
}

func (nw *mwuNet) add(name string, gbps float64) int {
	nw.names = append(nw.names, name)
	nw.capGBps = append(nw.capGBps, gbps)
	return len(nw.names) - 1
}

// Endpoints of route as ints: GPU i is i, the port of rail r is -1-r.
func epName(e int) string {
	if e < 0 {
		return topo.RailEndpoint(-1 - e)
	}
	return topo.GPUEndpoint(e)
}

func railEP(r int) int { return -1 - r }

// route is the directed link ids of topo's route from one endpoint of node
// ni to another (cached).
func (nw *mwuNet) route(ni int, from, to int) ([]int, error) {
	key := [3]int{ni, from, to}
	if r, ok := nw.routes[key]; ok {
		return r, nil
	}
	hops, err := nw.t.Nodes[ni].Route(epName(from), epName(to))
	if err != nil {
		return nil, fmt.Errorf("mwu: %w", err)
	}
	r := make([]int, len(hops))
	for i, h := range hops {
		r[i] = nw.ids[ni][2*h.Link]
		if !h.Forward {
			r[i] = nw.ids[ni][2*h.Link+1]
		}
	}
	nw.routes[key] = r
	return r, nil
}

// hop appends to p the links of the route from GPU from to GPU to of node
// ni.
func (nw *mwuNet) hop(p *MWUPath, ni, from, to int) error {
	links, err := nw.route(ni, from, to)
	if err != nil {
		return err
	}
	p.Links = append(p.Links, links...)
	return nil
}

// hasPort reports whether node ni has a link at "rail:R" (cached).
func (nw *mwuNet) hasPort(ni, r int) bool {
	k := [2]int{ni, r}
	if has, ok := nw.hasRail[k]; ok {
		return has
	}
	e := topo.RailEndpoint(r)
	has := false
	for _, l := range nw.t.Nodes[ni].Links {
		has = has || l.A == e || l.B == e
	}
	nw.hasRail[k] = has
	return has
}

// network is the links of a transfer from GPU a of node na to GPU b of node
// nb over rail r, as package sim routes it.
func (nw *mwuNet) network(na, a, nb, b, r int) ([]int, error) {
	rail, ok := nw.t.RailByIndex(r)
	if !ok {
		return nil, fmt.Errorf("mwu: topology %q has no rail %d", nw.t.Name, r)
	}
	if nw.hasPort(na, r) && nw.hasPort(nb, r) {
		up, err := nw.route(na, a, railEP(r))
		if err != nil {
			return nil, err
		}
		down, err := nw.route(nb, railEP(r), b)
		if err != nil {
			return nil, err
		}
		return append(slices.Clone(up), down...), nil
	}
	return []int{nw.port(na, r, 0, rail.BetaGBps), nw.port(nb, r, 1, rail.BetaGBps)}, nil
}

func (nw *mwuNet) port(ni, r, dir int, gbps float64) int {
	k := [3]int{ni, r, dir}
	if id, ok := nw.ports[k]; ok {
		return id
	}
	name := fmt.Sprintf("node%d rail:%d up", ni, r)
	if dir == 1 {
		name = fmt.Sprintf("node%d rail:%d down", ni, r)
	}
	id := nw.add(name, gbps)
	nw.ports[k] = id
	return id
}

func (nw *mwuNet) locate(rank int) (node, local int) {
	node, local, _ = nw.t.Locate(rank)
	return node, local
}

// defaultRail is the rail package sim gives a send without a hint: the
// source GPU's rail, or local % rails for a GPU with none.
func (nw *mwuNet) defaultRail(node, local int) int {
	if r := nw.t.Nodes[node].GPUs[local].Rail; r >= 0 {
		return r
	}
	return nw.t.Rails[local%nw.nRails].Index
}

// owner is the first GPU of node ni on rail r, or -1.
func (nw *mwuNet) owner(ni, r int) int {
	for _, g := range nw.t.Nodes[ni].GPUs {
		if g.Rail == r {
			return g.Index
		}
	}
	return -1
}

// candidates lists the paths of demand s -> d, the default path first;
// only the default path unless all.
func (nw *mwuNet) candidates(s, d int, all bool) ([]MWUPath, error) {
	ns, ls := nw.locate(s)
	nd, ld := nw.locate(d)
	if ns == nd {
		direct, err := nw.route(ns, ls, ld)
		if err != nil {
			return nil, err
		}
		out := []MWUPath{{Kind: MWUDirect, Ranks: []int{s, d}, Rail: topo.NoRail, Links: direct}}
		if !all {
			return out, nil
		}
		for m := range nw.t.Nodes[ns].GPUs {
			if m == ls || m == ld {
				continue
			}
			p := MWUPath{Kind: MWUTwoHop, Ranks: []int{s, nw.first[ns] + m, d}, Rail: topo.NoRail}
			if err := nw.hop(&p, ns, ls, m); err != nil {
				return nil, err
			}
			if err := nw.hop(&p, ns, m, ld); err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
	if nw.nRails == 0 {
		return nil, fmt.Errorf("mwu: topology %q has no rails: GPUs %d and %d cannot talk", nw.t.Name, s, d)
	}
	rs := nw.defaultRail(ns, ls)
	direct, err := nw.network(ns, ls, nd, ld, rs)
	if err != nil {
		return nil, err
	}
	out := []MWUPath{{Kind: MWUDirect, Ranks: []int{s, d}, Rail: rs, Links: direct}}
	if !all {
		return out, nil
	}
	for _, rail := range nw.t.Rails {
		r := rail.Index
		oa, ob := nw.owner(ns, r), nw.owner(nd, r)
		if oa < 0 || ob < 0 {
			continue
		}
		p := MWUPath{Kind: MWURail, Ranks: []int{s}, Rail: r}
		if oa != ls {
			if err := nw.hop(&p, ns, ls, oa); err != nil {
				return nil, err
			}
			p.Ranks = append(p.Ranks, nw.first[ns]+oa)
		}
		net, err := nw.network(ns, oa, nd, ob, r)
		if err != nil {
			return nil, err
		}
		p.Links = append(p.Links, net...)
		if ob != ld {
			if err := nw.hop(&p, nd, ob, ld); err != nil {
				return nil, err
			}
			p.Ranks = append(p.Ranks, nw.first[nd]+ob)
		}
		p.Ranks = append(p.Ranks, d)
		if slices.Equal(p.Links, direct) {
			continue // the default route is already rail-matched on r
		}
		out = append(out, p)
	}
	return out, nil
}
