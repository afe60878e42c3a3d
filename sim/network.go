package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// A network turns a topology into integer-indexed directed links, so the
// engine never touches strings on its hot path.
//
// Link ids:
//   - intra-node link li of node n: nodeBase[n]+2*li for the A->B direction,
//     +1 for B->A. A half-duplex link uses the A->B id for both directions
//     (one capacity shared by both ways); its B->A slot stays unused.
//   - NIC port of node n on rail r: railBase + 2*(n*nRails+r) towards the
//     rail switch ("up"), +1 from it ("down"). The rail switch itself is
//     non-blocking, so a flow between nodes occupies exactly the sender's up
//     port and the receiver's down port.
//   - memory of global GPU g: memBase+g. Local copies and reductions are
//     flows on it, so concurrent local operations of one GPU share its HBM.
type network struct {
	t        *topo.Topology
	names    []string
	capBpus  []float64 // capacity, bytes per microsecond (1 GB/s = 1e3 B/us)
	alphaUS  []float64
	used     []bool // false for the spare B->A slot of half-duplex links
	nodeBase []int32
	gpuBase  []int32 // global index of node n's GPU 0
	railBase int32
	memBase  int32
	nRails   int
	adj      []map[endpoint][]arc // per node: endpoint -> outgoing arcs
	routes   map[routeKey][]int32 // fallback cache, by node class
	// Nodes with identical link lists share routes: class[n] is node n's
	// class, rep[c] the first node of class c. dense[c] caches the routes
	// between GPUs, rail ports and hosts of a class, as link ids relative
	// to the representative's nodeBase, indexed by code(from)*nCodes+code(to).
	class     []int32
	rep       []int32
	dense     [][][]int32
	denseOK   [][]bool
	nGPUCode  int
	nRailCode int
	nCodes    int
}

// endpoint is a parsed "gpu:N", "host:S", "switch:N", "nic:N" or "rail:N".
type endpoint struct {
	kind  byte // 'g', 'h', 's', 'n'
	index int32
}

func (e endpoint) String() string {
	switch e.kind {
	case 'g':
		return "gpu:" + strconv.Itoa(int(e.index))
	case 'h':
		return "host:" + strconv.Itoa(int(e.index))
	case 's':
		return "switch:" + strconv.Itoa(int(e.index))
	case 'n':
		return "nic:" + strconv.Itoa(int(e.index))
	case 'r':
		return "rail:" + strconv.Itoa(int(e.index))
	}
	return "?"
}

func parseEndpoint(s string) (endpoint, error) {
	kind, num, ok := strings.Cut(s, ":")
	if !ok {
		return endpoint{}, fmt.Errorf("endpoint %q: want kind:N", s)
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return endpoint{}, fmt.Errorf("endpoint %q: bad index", s)
	}
	var k byte
	switch kind {
	case "gpu":
		k = 'g'
	case "host":
		k = 'h'
	case "switch":
		k = 's'
	case "nic":
		k = 'n'
	case "rail":
		k = 'r'
	default:
		return endpoint{}, fmt.Errorf("endpoint %q: unknown kind %q", s, kind)
	}
	return endpoint{k, int32(n)}, nil
}

// arc is one direction of a link, as seen from its tail endpoint.
type arc struct {
	to   endpoint
	link int32 // directed link id
	bw   float64
}

type routeKey struct {
	class    int32
	from, to endpoint
}

func newNetwork(t *topo.Topology) (*network, error) {
	nw := &network{t: t, routes: map[routeKey][]int32{}, nRails: len(t.Rails)}
	nw.nodeBase = make([]int32, len(t.Nodes))
	nw.gpuBase = make([]int32, len(t.Nodes))
	nw.adj = make([]map[endpoint][]arc, len(t.Nodes))
	id, gpus := int32(0), int32(0)
	for ni := range t.Nodes {
		n := &t.Nodes[ni]
		nw.nodeBase[ni] = id
		nw.gpuBase[ni] = gpus
		gpus += int32(len(n.GPUs))
		adj := map[endpoint][]arc{}
		for li, l := range n.Links {
			a, err := parseEndpoint(l.A)
			if err != nil {
				return nil, fmt.Errorf("node %d link %d: %w", ni, li, err)
			}
			b, err := parseEndpoint(l.B)
			if err != nil {
				return nil, fmt.Errorf("node %d link %d: %w", ni, li, err)
			}
			if l.Count <= 0 || !(l.BetaGBps > 0) {
				return nil, fmt.Errorf("node %d link %d (%s-%s): needs a positive count and bandwidth", ni, li, l.A, l.B)
			}
			fwd, bwd := id, id+1
			if !l.FullDuplex {
				bwd = fwd
			}
			bw := l.BandwidthGBps()
			name := n.Name
			if name == "" {
				name = "node" + strconv.Itoa(ni)
			}
			nw.add(fmt.Sprintf("%s %s %s->%s", name, l.Kind, l.A, l.B), bw, l.AlphaUS, true)
			nw.add(fmt.Sprintf("%s %s %s->%s", name, l.Kind, l.B, l.A), bw, l.AlphaUS, l.FullDuplex)
			adj[a] = append(adj[a], arc{b, fwd, bw})
			adj[b] = append(adj[b], arc{a, bwd, bw})
			id += 2
		}
		nw.adj[ni] = adj
	}
	nw.classify()
	nw.railBase = id
	for ni := range t.Nodes {
		for r, rail := range t.Rails {
			if !(rail.BetaGBps > 0) {
				return nil, fmt.Errorf("rail %d: bandwidth %g GB/s must be positive", r, rail.BetaGBps)
			}
			name := t.Nodes[ni].Name
			if name == "" {
				name = "node" + strconv.Itoa(ni)
			}
			// The rail's startup is added per transfer by transferRoute.
			nw.add(fmt.Sprintf("%s rail%d up", name, r), rail.BetaGBps, 0, true)
			nw.add(fmt.Sprintf("%s rail%d down", name, r), rail.BetaGBps, 0, true)
			id += 2
		}
	}
	nw.memBase = id
	return nw, nil
}

func (nw *network) add(name string, GBps, alphaUS float64, used bool) {
	nw.names = append(nw.names, name)
	nw.capBpus = append(nw.capBpus, GBps*1e3)
	nw.alphaUS = append(nw.alphaUS, alphaUS)
	nw.used = append(nw.used, used)
}

// addMemory appends one memory pseudo-link per GPU with the given copy
// bandwidth (GB/s) for each GPU (indexed globally).
func (nw *network) addMemory(copyGBps []float64) {
	for ni := range nw.t.Nodes {
		n := &nw.t.Nodes[ni]
		name := n.Name
		if name == "" {
			name = "node" + strconv.Itoa(ni)
		}
		for gi := range n.GPUs {
			nw.add(fmt.Sprintf("%s gpu:%d memory", name, gi), copyGBps[int(nw.gpuBase[ni])+gi], 0, true)
		}
	}
}

// names of the links, by id.
func (nw *network) name(l int32) string { return nw.names[l] }

// code maps an endpoint to its index in a dense route cache, or -1.
func (nw *network) code(e endpoint) int {
	switch e.kind {
	case 'g':
		if int(e.index) < nw.nGPUCode {
			return int(e.index)
		}
	case 'r':
		if int(e.index) < nw.nRailCode {
			return nw.nGPUCode + int(e.index)
		}
	case 'h':
		if h := nw.nGPUCode + nw.nRailCode + int(e.index); h < nw.nCodes {
			return h
		}
	}
	return -1
}

// maxDenseRoutes bounds the dense route caches, all classes together:
// about 25 bytes an entry.
const (
	maxDenseRoutes = 1 << 20
	maxDenseCodes  = 1 << 10 // per kind, so that no sum or product overflows
)

// classify groups nodes by identical link lists (every node of a repeated
// preset is one class), so routes are searched once per class.
func (nw *network) classify() {
	t := nw.t
	nw.class = make([]int32, len(t.Nodes))
	maxGPU, maxRail, maxSocket := 0, 0, 0
	for ni := range t.Nodes {
		n := &t.Nodes[ni]
		maxGPU = max(maxGPU, len(n.GPUs))
		maxSocket = max(maxSocket, n.Sockets)
		for _, g := range n.GPUs {
			maxSocket = max(maxSocket, g.Socket+1)
		}
		c := -1
		for ci, r := range nw.rep {
			if slices.Equal(t.Nodes[r].Links, n.Links) {
				c = ci
				break
			}
		}
		if c < 0 {
			c = len(nw.rep)
			nw.rep = append(nw.rep, int32(ni))
		}
		nw.class[ni] = int32(c)
	}
	for _, r := range t.Rails {
		maxRail = max(maxRail, r.Index+1)
	}
	// Codes come from the largest index the topology names (a rail's
	// Index, a node's Sockets), which may be far beyond the endpoints its
	// links use: past the bound, route through the map instead of sizing
	// a table by them.
	if maxGPU <= maxDenseCodes && maxRail <= maxDenseCodes && maxSocket <= maxDenseCodes {
		nw.nGPUCode, nw.nRailCode = maxGPU, maxRail
		nw.nCodes = maxGPU + maxRail + maxSocket
		if len(nw.rep)*nw.nCodes*nw.nCodes > maxDenseRoutes {
			nw.nGPUCode, nw.nRailCode, nw.nCodes = 0, 0, 0
		}
	}
	nw.dense = make([][][]int32, len(nw.rep))
	nw.denseOK = make([][]bool, len(nw.rep))
	for c := range nw.rep {
		nw.dense[c] = make([][]int32, nw.nCodes*nw.nCodes)
		nw.denseOK[c] = make([]bool, nw.nCodes*nw.nCodes)
	}
}

// appendRoute appends to dst the directed links from one endpoint of node
// ni to another, as topo.Node.Route chooses them (fewest hops, then widest;
// GPUs never forward).
func (nw *network) appendRoute(dst []int32, ni int, from, to endpoint) ([]int32, error) {
	c := nw.class[ni]
	off := nw.nodeBase[ni] - nw.nodeBase[nw.rep[c]]
	var rel []int32
	if a, b := nw.code(from), nw.code(to); a >= 0 && b >= 0 {
		k := a*nw.nCodes + b
		if !nw.denseOK[c][k] {
			r, err := nw.search(int(nw.rep[c]), from, to)
			if err != nil {
				return nil, err
			}
			nw.dense[c][k], nw.denseOK[c][k] = r, true
		}
		rel = nw.dense[c][k]
	} else {
		key := routeKey{c, from, to}
		r, ok := nw.routes[key]
		if !ok {
			var err error
			if r, err = nw.search(int(nw.rep[c]), from, to); err != nil {
				return nil, err
			}
			nw.routes[key] = r
		}
		rel = r
	}
	for _, l := range rel {
		dst = append(dst, l+off)
	}
	return dst, nil
}

// search asks topo for the route and turns its hops into directed link ids
// of node ni.
func (nw *network) search(ni int, from, to endpoint) ([]int32, error) {
	hops, err := nw.t.Nodes[ni].Route(from.String(), to.String())
	if err != nil {
		return nil, err
	}
	r := make([]int32, len(hops))
	links := nw.t.Nodes[ni].Links
	for i, h := range hops {
		id := nw.nodeBase[ni] + 2*int32(h.Link)
		if !h.Forward && links[h.Link].FullDuplex {
			id++
		}
		r[i] = id
	}
	return r, nil
}

// hasEndpoint reports whether node ni has any link at e.
func (nw *network) hasEndpoint(ni int, e endpoint) bool {
	_, ok := nw.adj[ni][e]
	return ok
}

// transferRoute appends to dst the directed links a send from (srcNode,
// srcGPU) to (dstNode, dstGPU) occupies, following the step's path hint,
// and returns the startup paid on top of the links' own (the rail network's).
func (nw *network) transferRoute(dst []int32, srcNode, srcGPU, dstNode, dstGPU int, path sched.Path) (links []int32, extraAlphaUS float64, err error) {
	t := nw.t
	g := func(i int) endpoint { return endpoint{'g', int32(i)} }
	if srcNode == dstNode {
		if srcGPU == dstGPU {
			return dst, 0, nil // a send to oneself moves through memory only
		}
		switch path.Kind {
		case sched.PathGPU:
			via := int(path.Index)
			if via >= len(t.Nodes[srcNode].GPUs) {
				return nil, 0, fmt.Errorf("path gpu:%d: node %d has %d GPUs", via, srcNode, len(t.Nodes[srcNode].GPUs))
			}
			if via != srcGPU && via != dstGPU {
				links, err = nw.staged(dst, srcNode, g(srcGPU), g(via), g(dstGPU))
				return links, 0, err
			}
		case sched.PathHost:
			// Stage through the host memory of the sender's socket; a peer
			// on the other socket is then reached across the socket link.
			s := t.Nodes[srcNode].GPUs[srcGPU].Socket
			links, err = nw.staged(dst, srcNode, g(srcGPU), endpoint{'h', int32(s)}, g(dstGPU))
			return links, 0, err
		}
		dst, err = nw.appendRoute(dst, srcNode, g(srcGPU), g(dstGPU))
		return dst, 0, err
	}
	if nw.nRails == 0 {
		return nil, 0, fmt.Errorf("topology %q has no rails: nodes %d and %d cannot talk", t.Name, srcNode, dstNode)
	}
	rail := t.Nodes[srcNode].GPUs[srcGPU].Rail
	if path.Kind == sched.PathRail {
		rail = int(path.Index)
	}
	if rail < 0 {
		// A GPU with no rail near it takes the rails in turn by local
		// index: by their position, since rail indices need not be
		// 0..R-1 (as nimble's planner picks them).
		rail = t.Rails[srcGPU%nw.nRails].Index
	}
	ri := nw.railIndex(rail)
	if ri < 0 {
		return nil, 0, fmt.Errorf("rail %d: topology %q has no such rail", rail, t.Name)
	}
	// The rail network's own latency (switch and wire) is paid once.
	alphaUS := t.Rails[ri].AlphaUS
	port := endpoint{'r', int32(rail)}
	if nw.hasEndpoint(srcNode, port) && nw.hasEndpoint(dstNode, port) {
		// The node describes its NIC port as a link ending at "rail:R":
		// the sender's port (nic->rail) and the receiver's (rail->nic) are
		// the rail links of the route; the switch between them is
		// non-blocking.
		if dst, err = nw.appendRoute(dst, srcNode, g(srcGPU), port); err != nil {
			return nil, 0, err
		}
		dst, err = nw.appendRoute(dst, dstNode, port, g(dstGPU))
		return dst, alphaUS, err
	}
	// No port described: the synthetic up and down ports at the rail's rate.
	up := nw.railBase + int32(2*(srcNode*nw.nRails+ri))
	down := nw.railBase + int32(2*(dstNode*nw.nRails+ri)) + 1
	return append(dst, up, down), alphaUS, nil
}

// railIndex finds the position in Topology.Rails of the rail with Index r.
func (nw *network) railIndex(r int) int {
	for i, rl := range nw.t.Rails {
		if rl.Index == r {
			return i
		}
	}
	return -1
}

func (nw *network) staged(dst []int32, ni int, a, via, b endpoint) ([]int32, error) {
	dst, err := nw.appendRoute(dst, ni, a, via)
	if err != nil {
		return nil, err
	}
	return nw.appendRoute(dst, ni, via, b)
}
