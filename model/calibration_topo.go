package model

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/topo"
)

// ApplyTo replaces t's nominal link figures with what the calibration
// measured between its GPUs, on every node (nodes are alike), and says
// what it changed. A "direct" path GPU a -> b becomes the one link between
// gpu:a and gpu:b (count 1: the measured bandwidth is the bundle's); a
// "host" path GPU a -> b sets the PCIe links of gpu:a and gpu:b to the
// measured bandwidth with half the startup each, since the staged path
// crosses both; GPU-staged paths are left out (their hops are direct
// paths, measured as such). A measured pair the topology has no link for,
// or GPUs it does not have, is an error: predictions must not mix a
// machine's figures with another's shape.
func (c *Calibration) ApplyTo(t *topo.Topology) ([]string, error) {
	var notes []string
	for _, p := range c.Paths {
		a, b, ok := gpuPair(p)
		if !ok {
			continue
		}
		for ni := range t.Nodes {
			n := &t.Nodes[ni]
			if a >= len(n.GPUs) || b >= len(n.GPUs) {
				return nil, fmt.Errorf("calibration measured GPU %d -> GPU %d, but topology %q has %d GPUs per node", a, b, t.Name, len(n.GPUs))
			}
			switch {
			case p.Path == DirectName:
				l := findLink(n, gpuEnd(a), gpuEnd(b))
				if l == nil {
					return nil, fmt.Errorf("calibration measured a direct path GPU %d -> GPU %d, but topology %q has no link between them", a, b, t.Name)
				}
				l.Count, l.AlphaUS, l.BetaGBps = 1, p.AlphaUS, p.BetaGBps
			case p.Path == HostName:
				for _, g := range []int{a, b} {
					l := findKind(n, gpuEnd(g), topo.PCIe)
					if l == nil {
						return nil, fmt.Errorf("calibration measured a host path from GPU %d, but topology %q has no PCIe link for it", g, t.Name)
					}
					l.Count, l.AlphaUS, l.BetaGBps = 1, p.AlphaUS/2, p.BetaGBps
				}
			default:
				continue
			}
		}
		if p.Path == DirectName || p.Path == HostName {
			notes = append(notes, fmt.Sprintf("%s GPU %d -> GPU %d: %.2f us, %.1f GB/s (measured)", p.Path, a, b, p.AlphaUS, p.BetaGBps))
		}
	}
	if len(notes) == 0 {
		return nil, fmt.Errorf("calibration of %s (%s) measured no GPU path (skipped: %s)", c.Host, c.Date, strings.Join(c.Skipped, "; "))
	}
	return notes, t.Validate()
}

// gpuPair reads "GPU a" -> "GPU b" from a calibrated path's ends.
func gpuPair(p CalibratedPath) (a, b int, ok bool) {
	a, errA := strconv.Atoi(strings.TrimPrefix(p.From, "GPU "))
	b, errB := strconv.Atoi(strings.TrimPrefix(p.To, "GPU "))
	return a, b, errA == nil && errB == nil && strings.HasPrefix(p.From, "GPU ") && strings.HasPrefix(p.To, "GPU ") && a >= 0 && b >= 0
}

func gpuEnd(g int) string { return "gpu:" + strconv.Itoa(g) }

func findLink(n *topo.Node, x, y string) *topo.Link {
	for i := range n.Links {
		l := &n.Links[i]
		if (l.A == x && l.B == y) || (l.A == y && l.B == x) {
			return l
		}
	}
	return nil
}

func findKind(n *topo.Node, end string, k topo.LinkKind) *topo.Link {
	for i := range n.Links {
		l := &n.Links[i]
		if l.Kind == k && (l.A == end || l.B == end) {
			return l
		}
	}
	return nil
}
