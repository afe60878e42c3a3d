package topo

import "sync"

// Router answers Node.Route queries from a cache, for callers that route
// the same pairs many times (the simulator, schedule builders). It keeps a
// snapshot of the node's links taken by Node.Router: later changes to the
// node are not seen. Safe for concurrent use.
type Router struct {
	name string
	g    *linkGraph
	mu   sync.Mutex
	memo map[[2]string]cachedRoute
}

type cachedRoute struct {
	hops []Hop
	err  error
}

// Router returns a caching router over a snapshot of n's links.
func (n *Node) Router() *Router {
	snap := *n
	snap.Links = append([]Link(nil), n.Links...)
	return &Router{name: n.Name, g: snap.linkGraph(), memo: map[[2]string]cachedRoute{}}
}

// Route is Node.Route, cached. The returned slice is shared between
// callers: read it, do not modify it.
func (r *Router) Route(from, to string) ([]Hop, error) {
	k := [2]string{from, to}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.memo[k]; ok {
		return c.hops, c.err
	}
	hops, err := r.g.route(r.name, from, to)
	r.memo[k] = cachedRoute{hops, err}
	return hops, err
}

// PathCost is Node.PathCost over the snapshot.
func (r *Router) PathCost(hops []Hop) (alphaUS, bottleneckGBps float64) {
	n := Node{Links: r.g.links}
	return n.PathCost(hops)
}
