package model

import (
	"fmt"
	"math"

	"github.com/goring-hpc/goring/topo"
)

// EnumeratePaths lists the paths from GPU src to GPU dst of node, in launch
// order (Multi-path model, section 3.1 and Algorithm 1 lines 7-17):
//
//   - "direct": the node's route between the two GPUs (NVLink, NVSwitch, or
//     PCIe peer-to-peer through the root complexes);
//   - "gpu:k" for every other GPU k, ascending: the route src->k, a staging
//     buffer in k's memory, the route k->dst. Both routes must stay on
//     NVLink-class links (nvlink, nvswitch): a GPU-staged path that crossed a
//     root complex would be a slower copy of the host path;
//   - "host": a staging buffer in the host memory of src's socket or of
//     dst's socket: when the two GPUs sit on different sockets one of the
//     two hops crosses the socket link, and that link's startup and
//     bandwidth are part of that hop. Both choices usually cross the same
//     links (only the hop the socket link belongs to differs), so the
//     wider bottleneck, then the smaller startup, and then src's socket
//     decide.
//
// Each hop's alpha and beta come from topo's PathCost (startups summed,
// narrowest link). A path is left out when it would share a link direction
// (both directions for a half-duplex link) with a path listed before it, or
// when its two hops share one: the model treats every path's bandwidth as
// its own, which such a path would not have. On an NVSwitch node this leaves
// out every GPU-staged path, since its first hop leaves src over the same
// NVSwitch port as the direct route.
//
// Staged paths get o's staging epsilon per chunk.
func EnumeratePaths(node *topo.Node, src, dst int, o Options) ([]Path, error) {
	g := len(node.GPUs)
	for _, v := range [2]int{src, dst} {
		if v < 0 || v >= g {
			return nil, fmt.Errorf("GPU %d out of range: node %q has GPUs 0..%d", v, node.Name, g-1)
		}
	}
	if src == dst {
		return nil, fmt.Errorf("source and destination are the same GPU %d", src)
	}
	taken := linkUse{}
	var out []Path
	from, to := topo.GPUEndpoint(src), topo.GPUEndpoint(dst)

	if hops, err := node.Route(from, to); err == nil {
		a, b := node.PathCost(hops)
		if finitePos(b) {
			out = append(out, Path{Name: DirectName, Alpha1US: a, Beta1GBps: b})
			taken.add(node, hops)
		}
	}

	for k := 0; k < g; k++ {
		if k == src || k == dst {
			continue
		}
		via := topo.GPUEndpoint(k)
		h1, err1 := node.Route(from, via)
		h2, err2 := node.Route(via, to)
		if err1 != nil || err2 != nil || !nvlinkOnly(node, h1) || !nvlinkOnly(node, h2) {
			continue
		}
		if !taken.free(node, h1, h2) {
			continue
		}
		a1, b1 := node.PathCost(h1)
		a2, b2 := node.PathCost(h2)
		out = append(out, Path{Name: GPUStagedName(k), Alpha1US: a1, Beta1GBps: b1,
			Alpha2US: a2, Beta2GBps: b2, EpsilonUS: o.GPUStageEpsilonUS, Staged: true})
		taken.add(node, h1)
		taken.add(node, h2)
	}

	if host, h1, h2, ok := bestHostPath(node, src, dst, taken, o); ok {
		out = append(out, host)
		taken.add(node, h1)
		taken.add(node, h2)
	}
	return out, nil
}

// bestHostPath picks the host-staged path through the memory of src's or
// dst's socket that is free of taken links and has the wider bottleneck,
// then the smaller total startup, then src's socket.
func bestHostPath(node *topo.Node, src, dst int, taken linkUse, o Options) (Path, []topo.Hop, []topo.Hop, bool) {
	sockets := []int{node.GPUs[src].Socket}
	if s := node.GPUs[dst].Socket; s != sockets[0] {
		sockets = append(sockets, s)
	}
	var best Path
	var bh1, bh2 []topo.Hop
	found := false
	for _, s := range sockets {
		mem := topo.HostEndpoint(s)
		h1, err1 := node.Route(topo.GPUEndpoint(src), mem)
		h2, err2 := node.Route(mem, topo.GPUEndpoint(dst))
		if err1 != nil || err2 != nil || !taken.free(node, h1, h2) {
			continue
		}
		a1, b1 := node.PathCost(h1)
		a2, b2 := node.PathCost(h2)
		if !finitePos(b1) || !finitePos(b2) {
			continue
		}
		c := Path{Name: HostName, Alpha1US: a1, Beta1GBps: b1, Alpha2US: a2, Beta2GBps: b2,
			EpsilonUS: o.HostStageEpsilonUS, Staged: true}
		if !found || hostBetter(c, best) {
			best, bh1, bh2, found = c, h1, h2, true
		}
	}
	return best, bh1, bh2, found
}

func hostBetter(a, b Path) bool {
	ba, bb := math.Min(a.Beta1GBps, a.Beta2GBps), math.Min(b.Beta1GBps, b.Beta2GBps)
	if ba != bb {
		return ba > bb
	}
	return a.Alpha1US+a.Alpha2US < b.Alpha1US+b.Alpha2US
}

// nvlinkOnly reports whether every hop is an NVLink or NVSwitch link.
func nvlinkOnly(node *topo.Node, hops []topo.Hop) bool {
	for _, h := range hops {
		if k := node.Links[h.Link].Kind; k != topo.NVLink && k != topo.NVSwitch {
			return false
		}
	}
	return true
}

// linkUse records which link directions paths already use. A full-duplex
// link has two independent directions; a half-duplex one is used as a whole.
type linkUse map[[2]int]bool

func linkKeys(node *topo.Node, h topo.Hop) [][2]int {
	if !node.Links[h.Link].FullDuplex {
		return [][2]int{{h.Link, 0}, {h.Link, 1}}
	}
	dir := 0
	if h.Forward {
		dir = 1
	}
	return [][2]int{{h.Link, dir}}
}

func (u linkUse) add(node *topo.Node, hops []topo.Hop) {
	for _, h := range hops {
		for _, key := range linkKeys(node, h) {
			u[key] = true
		}
	}
}

// free reports whether the hops of one candidate path use no taken link
// direction and no link direction twice.
func (u linkUse) free(node *topo.Node, routes ...[]topo.Hop) bool {
	mine := linkUse{}
	for _, hops := range routes {
		for _, h := range hops {
			for _, key := range linkKeys(node, h) {
				if u[key] || mine[key] {
					return false
				}
				mine[key] = true
			}
		}
	}
	return true
}
