package topo

import "fmt"

// Validate checks the topology and returns the first problem found, named
// precisely enough to fix the input.
func (t *Topology) Validate() error {
	if len(t.Nodes) == 0 {
		return fmt.Errorf("topology %q: no nodes", t.Name)
	}
	for ni := range t.Nodes {
		n := &t.Nodes[ni]
		if len(n.GPUs) == 0 {
			return fmt.Errorf("topology %q node %d: no GPUs", t.Name, ni)
		}
		for gi, g := range n.GPUs {
			if g.Index != gi {
				return fmt.Errorf("topology %q node %d: GPU at position %d has index %d (indices must be 0..%d in order)", t.Name, ni, gi, g.Index, len(n.GPUs)-1)
			}
		}
		for li, l := range n.Links {
			if l.Count <= 0 {
				return fmt.Errorf("topology %q node %d link %d (%s %s-%s): count %d must be positive", t.Name, ni, li, l.Kind, l.A, l.B, l.Count)
			}
			if !(l.BetaGBps > 0) {
				return fmt.Errorf("topology %q node %d link %d (%s %s-%s): bandwidth %g GB/s must be positive", t.Name, ni, li, l.Kind, l.A, l.B, l.BetaGBps)
			}
		}
	}
	return nil
}
