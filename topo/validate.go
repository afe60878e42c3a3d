package topo

import (
	"fmt"
	"math"
)

// Validate checks the topology and returns the first problem found, named
// precisely enough to fix the input: which node, GPU, NIC, rail or link,
// and what is wrong with it.
//
// What it checks, in order: the topology has nodes with distinct names and
// rails with distinct, non-negative indices and sane figures; each node has
// at least one socket; its GPUs are indexed 0..n-1 in order, on an existing
// socket, on a non-negative NUMA node (below NUMANodes when that is given),
// with a Rail of -1 or an existing rail; its NICs have distinct indices that
// name rails, on existing sockets; every link has a known kind, two
// different well-formed endpoints that exist in the node, a count of at
// least 1, a finite positive bandwidth and a finite non-negative startup;
// finally every GPU has a route (Node.Route's rules) to every other GPU of
// its node and to its own rail.
func (t *Topology) Validate() error {
	if len(t.Nodes) == 0 {
		return fmt.Errorf("topology %q: no nodes", t.Name)
	}
	rails := make(map[int]bool, len(t.Rails))
	for ri, r := range t.Rails {
		if r.Index < 0 {
			return fmt.Errorf("topology %q rail at position %d: index %d must not be negative", t.Name, ri, r.Index)
		}
		if rails[r.Index] {
			return fmt.Errorf("topology %q rail at position %d: duplicate rail index %d", t.Name, ri, r.Index)
		}
		rails[r.Index] = true
		if err := checkFigures(r.AlphaUS, r.BetaGBps); err != nil {
			return fmt.Errorf("topology %q rail %d: %w", t.Name, r.Index, err)
		}
	}
	names := make(map[string]int, len(t.Nodes))
	for ni := range t.Nodes {
		n := &t.Nodes[ni]
		if prev, dup := names[n.Name]; dup {
			return fmt.Errorf("topology %q node %d: duplicate node name %q (node %d has it too)", t.Name, ni, n.Name, prev)
		}
		names[n.Name] = ni
		if err := n.validate(rails); err != nil {
			return fmt.Errorf("topology %q node %d (%q): %w", t.Name, ni, n.Name, err)
		}
	}
	return nil
}

// checkFigures rejects a startup or bandwidth no cost can be computed from.
func checkFigures(alphaUS, betaGBps float64) error {
	if math.IsNaN(betaGBps) || math.IsInf(betaGBps, 0) || betaGBps <= 0 {
		return fmt.Errorf("bandwidth %g GB/s must be positive and finite", betaGBps)
	}
	if math.IsNaN(alphaUS) || math.IsInf(alphaUS, 0) || alphaUS < 0 {
		return fmt.Errorf("alpha %g us must be finite and not negative", alphaUS)
	}
	return nil
}

func (n *Node) validate(rails map[int]bool) error {
	if n.Sockets < 1 {
		return fmt.Errorf("sockets %d: want at least 1", n.Sockets)
	}
	if n.NUMANodes < 0 {
		return fmt.Errorf("numa_nodes %d must not be negative", n.NUMANodes)
	}
	if len(n.GPUs) == 0 {
		return fmt.Errorf("no GPUs")
	}
	seen := make(map[int]int, len(n.GPUs))
	for gi, g := range n.GPUs {
		if prev, dup := seen[g.Index]; dup {
			return fmt.Errorf("GPU at position %d: duplicate GPU index %d (position %d has it too)", gi, g.Index, prev)
		}
		seen[g.Index] = gi
		if g.Index != gi {
			return fmt.Errorf("GPU at position %d has index %d (indices must be 0..%d in order)", gi, g.Index, len(n.GPUs)-1)
		}
		if g.Socket < 0 || g.Socket >= n.Sockets {
			return fmt.Errorf("GPU %d: socket %d out of range (0..%d)", gi, g.Socket, n.Sockets-1)
		}
		if g.Share < 0 {
			return fmt.Errorf("GPU %d: share %d must not be negative", gi, g.Share)
		}
		if g.NUMA < 0 || (n.NUMANodes > 0 && g.NUMA >= n.NUMANodes) {
			if n.NUMANodes > 0 {
				return fmt.Errorf("GPU %d: NUMA node %d out of range (0..%d)", gi, g.NUMA, n.NUMANodes-1)
			}
			return fmt.Errorf("GPU %d: NUMA node %d must not be negative", gi, g.NUMA)
		}
		if g.Rail < -1 || (g.Rail >= 0 && !rails[g.Rail]) {
			return fmt.Errorf("GPU %d: rail %d names no rail of the topology (-1: none)", gi, g.Rail)
		}
	}
	nics := make(map[int]bool, len(n.NICs))
	for pi, p := range n.NICs {
		if nics[p.Index] {
			return fmt.Errorf("NIC at position %d: duplicate NIC index %d", pi, p.Index)
		}
		nics[p.Index] = true
		if !rails[p.Index] {
			return fmt.Errorf("NIC %d names no rail of the topology (a NIC's index is its rail)", p.Index)
		}
		if p.Socket < 0 || p.Socket >= n.Sockets {
			return fmt.Errorf("NIC %d: socket %d out of range (0..%d)", p.Index, p.Socket, n.Sockets-1)
		}
	}
	for li, l := range n.Links {
		if err := n.validateLink(l, nics, rails); err != nil {
			return fmt.Errorf("link %d (%s %s-%s): %w", li, l.Kind, l.A, l.B, err)
		}
	}
	return n.validateReach()
}

func (n *Node) validateLink(l Link, nics, rails map[int]bool) error {
	switch l.Kind {
	case NVLink, NVSwitch, PCIe, UPI, NIC:
	default:
		return fmt.Errorf("unknown kind %q (want nvlink, nvswitch, pcie, upi or nic)", l.Kind)
	}
	for _, e := range [2]string{l.A, l.B} {
		kind, idx, err := ParseEndpoint(e)
		if err != nil {
			return err
		}
		switch kind {
		case KindGPU:
			if idx >= len(n.GPUs) {
				return fmt.Errorf("endpoint %s: GPU %d out of range (0..%d)", e, idx, len(n.GPUs)-1)
			}
		case KindHost:
			if idx >= n.Sockets {
				return fmt.Errorf("endpoint %s: socket %d out of range (0..%d)", e, idx, n.Sockets-1)
			}
		case KindNIC:
			if !nics[idx] {
				return fmt.Errorf("endpoint %s: the node has no NIC %d", e, idx)
			}
		case KindRail:
			if !rails[idx] {
				return fmt.Errorf("endpoint %s: the topology has no rail %d", e, idx)
			}
		}
	}
	if l.A == l.B {
		return fmt.Errorf("both ends are %s", l.A)
	}
	// A NIC's port joins exactly its NIC and its rail; nothing else touches
	// a rail endpoint (Route relies on it: rails never forward).
	ka, ia, _ := ParseEndpoint(l.A)
	kb, ib, _ := ParseEndpoint(l.B)
	if ka == KindRail || kb == KindRail || l.Kind == NIC {
		if l.Kind != NIC || !((ka == KindNIC && kb == KindRail) || (ka == KindRail && kb == KindNIC)) || ia != ib {
			return fmt.Errorf("a rail endpoint needs a link of kind nic between nic:R and rail:R")
		}
	}
	if l.Count < 1 {
		return fmt.Errorf("count %d must be at least 1", l.Count)
	}
	return checkFigures(l.AlphaUS, l.BetaGBps)
}

// validateReach checks that every GPU reaches every other GPU of the node
// and its own rail under Route's forwarding rules. Reachability needs no
// widths, so it is one search per GPU rather than one Route per pair.
func (n *Node) validateReach() error {
	adj := make(map[string][]int, 2*len(n.Links))
	for i, l := range n.Links {
		adj[l.A] = append(adj[l.A], i)
		adj[l.B] = append(adj[l.B], i)
	}
	type state struct {
		at     string
		viaNIC bool // entered over a link of kind nic
	}
	for _, g := range n.GPUs {
		src := GPUEndpoint(g.Index)
		reached := map[string]bool{src: true}
		visited := map[state]bool{{at: src}: true}
		queue := []state{{at: src}}
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			for _, li := range adj[s.at] {
				l := &n.Links[li]
				if s.at != src {
					var in LinkKind
					if s.viaNIC {
						in = NIC
					}
					kind, _, _ := ParseEndpoint(s.at)
					if !forwards(kind, in, l.Kind) {
						continue
					}
				}
				v := l.B
				if v == s.at {
					v = l.A
				}
				reached[v] = true
				next := state{at: v, viaNIC: l.Kind == NIC}
				if !visited[next] {
					visited[next] = true
					queue = append(queue, next)
				}
			}
		}
		for _, h := range n.GPUs {
			if !reached[GPUEndpoint(h.Index)] {
				return fmt.Errorf("GPU %d has no route to GPU %d (GPUs do not forward: add a link, a host path or a switch)", g.Index, h.Index)
			}
		}
		if g.Rail >= 0 && !reached[RailEndpoint(g.Rail)] {
			return fmt.Errorf("GPU %d has no route to its rail %d (no NIC %d, or none reachable)", g.Index, g.Rail, g.Rail)
		}
	}
	return nil
}
