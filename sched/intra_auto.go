package sched

import (
	"strconv"

	"github.com/goring-hpc/goring/topo"
)

// What "auto" picks for the intra-node phase, from the links of a node.

// AutoIntra names the intra-node algorithm "auto" picks for the nodes of t:
// congestion_aware when the GPUs pair up by NVLink across two sockets
// (Parallel Rings III-C, Fig. 2b), linear otherwise: on a full mesh (III-B,
// Fig. 4) and, for want of a better-founded choice, on any other shape.
func AutoIntra(t *topo.Topology) string { return autoIntra(&t.Nodes[0]) }

func autoIntra(n *topo.Node) string {
	if len(n.GPUs) > 1 && !fullMesh(n) {
		if _, reason := nvlinkPairs(n); reason == "" {
			return "congestion_aware"
		}
	}
	return "linear"
}

// gpuIndex returns the GPU index of endpoint e, or -1 when e is not a GPU.
func gpuIndex(e string) int {
	k, i, err := topo.ParseEndpoint(e)
	if err != nil || k != topo.KindGPU {
		return -1
	}
	return i
}

// fullMesh reports whether every two GPUs of n share a direct NVLink, or all
// GPUs hang off one NVSwitch plane (which is a full mesh to a schedule).
func fullMesh(n *topo.Node) bool {
	G := len(n.GPUs)
	direct := make([]bool, G*G)
	onSwitch := map[string]int{}
	for _, l := range n.Links {
		if l.Kind != topo.NVLink && l.Kind != topo.NVSwitch {
			continue
		}
		a, b := gpuIndex(l.A), gpuIndex(l.B)
		switch {
		case a >= 0 && b >= 0 && a < G && b < G:
			direct[a*G+b], direct[b*G+a] = true, true
		case a >= 0 && b < 0:
			onSwitch[l.B]++
		case b >= 0 && a < 0:
			onSwitch[l.A]++
		}
	}
	for _, cnt := range onSwitch {
		if cnt >= G {
			return true
		}
	}
	for i := 0; i < G; i++ {
		for j := i + 1; j < G; j++ {
			if !direct[i*G+j] {
				return false
			}
		}
	}
	return true
}

// nvlinkPairs derives the NVLink pairing of n's GPUs from its links: each
// GPU must have exactly one NVLink peer, and the GPUs must span at least two
// sockets (Parallel Rings Fig. 2b). peer[i] is GPU i's partner. reason says why n
// is not such a node ("" when it is).
func nvlinkPairs(n *topo.Node) (peer []int, reason string) {
	G := len(n.GPUs)
	peer = make([]int, G)
	for i := range peer {
		peer[i] = -1
	}
	if G%2 != 0 {
		return nil, "an odd number of GPUs per node cannot pair up"
	}
	for _, l := range n.Links {
		if l.Kind != topo.NVLink {
			continue
		}
		a, b := gpuIndex(l.A), gpuIndex(l.B)
		if a < 0 || b < 0 || a >= G || b >= G || a == b {
			continue
		}
		if (peer[a] >= 0 && peer[a] != b) || (peer[b] >= 0 && peer[b] != a) {
			return nil, "a GPU has NVLinks to more than one other GPU (a mesh, not pairs)"
		}
		peer[a], peer[b] = b, a
	}
	for i, q := range peer {
		if q < 0 {
			return nil, "GPU " + strconv.Itoa(i) + " has no NVLink peer"
		}
	}
	sockets := map[int]bool{}
	for _, g := range n.GPUs {
		sockets[g.Socket] = true
	}
	if len(sockets) < 2 {
		return nil, "all GPUs sit on one socket"
	}
	return peer, ""
}
