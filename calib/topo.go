package calib

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/topo"
)

// Measured link figures for the simulator.
//
// A topology's link figures come from data sheets: on h200x2 the NVLink
// bundle is 18 x 26.56 GB/s = 478 GB/s, where one peer copy moves 380-395
// GB/s (docs/gpu.md, "Reference figures"), so the simulator predicts
// collectives a quarter faster than the copy engines can run them.
// CalibrateTopology puts the calibration's figures on the links its paths
// crossed:
//
//   - a measured path's route (the direct route; for a staged path both
//     legs, through the source GPU's socket memory or GPU K, as the
//     simulator routes a "host" or "gpu:K" hint) is found in the
//     topology, and the links at the route's narrowest bandwidth get the
//     measured bandwidth (divided over a bundle's Count links): the
//     simulator then moves that path's flow at the measured rate;
//   - a direct path over one link also gives that link its measured
//     startup; a staged path's fitted intercept is mostly its pipeline's
//     fill, not a link's startup, and a startup spread over several links
//     cannot be told apart, so those startups stay;
//   - a link that several measured paths cross gets the smallest of their
//     bandwidths, and a link a full-duplex bundle carries both ways gets
//     the figure of the direction measured;
//   - GPUs named in the file that the node lacks, or a file of another GPU
//     count or model, are errors (CheckNode): predictions must not mix one
//     machine's figures with another's shape.
//
// Contention is not carried over: the simulator shares links between
// flows (max-min), and paths that contend without sharing a link are
// beyond it.

// CalibrateTopology returns a copy of t (t is not modified) whose links
// carry the file's measured figures as described above, and one note per
// measured GPU path: what it measured and the links of the first node it
// changed, old and new figures (every node gets the same changes). It
// fails when a node does not match the file (CheckNode), when a measured
// path has no route in the topology, or when the file measured no GPU
// path at all.
func (c *Calibration) CalibrateTopology(t *topo.Topology) (*topo.Topology, []string, error) {
	out := *t
	out.Nodes = make([]topo.Node, len(t.Nodes))
	var notes []string
	for ni := range t.Nodes {
		orig := &t.Nodes[ni]
		if err := c.CheckNode(orig); err != nil {
			return nil, nil, err
		}
		router := orig.Router() // routes over the data-sheet figures
		beta := map[int]float64{}
		alpha := map[int]float64{}
		type measured struct {
			p     CalibratedPath
			links []int
		}
		var paths []measured
		for _, p := range c.Paths {
			src, ok1 := parseGPU(p.From)
			dst, ok2 := parseGPU(p.To)
			if !ok1 || !ok2 {
				continue // the host-memory path between two processes
			}
			legs, err := pathLegs(orig, router, p.Path, src, dst)
			if err != nil {
				return nil, nil, fmt.Errorf("calibration path %s %s -> %s on node %q: %w", p.Path, p.From, p.To, orig.Name, err)
			}
			if legs == nil {
				continue
			}
			m := measured{p: p}
			narrow := math.Inf(1)
			for _, leg := range legs {
				_, b := router.PathCost(leg)
				narrow = math.Min(narrow, b)
			}
			for _, leg := range legs {
				for _, h := range leg {
					l := orig.Links[h.Link]
					if l.BandwidthGBps() > narrow {
						continue
					}
					m.links = append(m.links, h.Link)
					per := p.BetaGBps / float64(l.Count)
					if old, ok := beta[h.Link]; !ok || per < old {
						beta[h.Link] = per
					}
				}
			}
			if len(legs) == 1 && len(legs[0]) == 1 && p.Path == model.DirectName {
				alpha[legs[0][0].Link] = p.AlphaUS
			}
			paths = append(paths, m)
		}
		if len(paths) == 0 {
			why := "no GPU path"
			if len(c.Skipped) > 0 {
				why += " (skipped: " + strings.Join(c.Skipped, "; ") + ")"
			}
			return nil, nil, fmt.Errorf("calibration measured %s: nothing to put on the topology's links", why)
		}
		n := *orig
		n.Links = append([]topo.Link(nil), orig.Links...)
		for li, b := range beta {
			n.Links[li].BetaGBps = b
		}
		for li, a := range alpha {
			n.Links[li].AlphaUS = a
		}
		out.Nodes[ni] = n
		if ni > 0 {
			continue
		}
		for _, m := range paths {
			note := fmt.Sprintf("%s %s -> %s measured %.2f GB/s, %.2f us:", m.p.Path, m.p.From, m.p.To, m.p.BetaGBps, m.p.AlphaUS)
			for k, li := range m.links {
				was, now := orig.Links[li], n.Links[li]
				if k > 0 {
					note += ";"
				}
				note += fmt.Sprintf(" %s %s-%s x%d %.2f -> %.2f GB/s", was.Kind, was.A, was.B, was.Count, was.BandwidthGBps(), now.BandwidthGBps())
				if was.AlphaUS != now.AlphaUS {
					note += fmt.Sprintf(", startup %.2f -> %.2f us", was.AlphaUS, now.AlphaUS)
				}
			}
			notes = append(notes, note)
		}
	}
	return &out, notes, nil
}

// pathLegs is the route (one leg) or the two legs (staged) of the path
// called name from GPU src to GPU dst, as the simulator routes it; nil for
// a path name that is none of direct, host, gpu:K.
// gpuStagedPrefix begins the name of a path staged through another GPU
// (model.GPUStagedName).
const gpuStagedPrefix = "gpu:"

func pathLegs(node *topo.Node, r *topo.Router, name string, src, dst int) ([][]topo.Hop, error) {
	from, to := topo.GPUEndpoint(src), topo.GPUEndpoint(dst)
	var via string
	switch (model.Path{Name: name}).Family() {
	case model.PathDirect:
		hops, err := r.Route(from, to)
		if err != nil {
			return nil, err
		}
		return [][]topo.Hop{hops}, nil
	case model.PathHost:
		via = topo.HostEndpoint(node.GPUs[src].Socket)
	case model.PathGPU:
		k, err := strconv.Atoi(strings.TrimPrefix(name, gpuStagedPrefix))
		if err != nil || k < 0 || k >= len(node.GPUs) {
			return nil, fmt.Errorf("path %q: no such GPU on the node", name)
		}
		via = topo.GPUEndpoint(k)
	default:
		return nil, nil
	}
	h1, err := r.Route(from, via)
	if err != nil {
		return nil, err
	}
	h2, err := r.Route(via, to)
	if err != nil {
		return nil, err
	}
	return [][]topo.Hop{h1, h2}, nil
}
