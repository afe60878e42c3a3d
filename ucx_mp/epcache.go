package ucxmp

import (
	"errors"

	"github.com/goring-hpc/goring/ucx"
)

// EndpointCache keeps a worker's endpoints from one transport to the next:
// a team layer that reuses a worker for a new team of the same peers
// (their workers reused too) would otherwise create, wire up and later
// flush and close an endpoint per peer per team, which costs more than
// the rest of a small team's first call. New takes an endpoint from the
// cache for an address (and error mode) it holds; Release puts the
// transport's healthy endpoints back instead of closing them. A cache
// belongs to one worker and is used by one transport at a time.
type EndpointCache struct {
	eps map[epKey]*ucx.Endpoint
}

type epKey struct {
	addr       string
	peerErrors bool
}

// maxCachedEndpoints bounds a cache; past it the oldest are not kept
// (Release closes what it cannot keep).
const maxCachedEndpoints = 1024

func (c *EndpointCache) take(addr []byte, peerErrors bool) *ucx.Endpoint {
	if c == nil || c.eps == nil {
		return nil
	}
	k := epKey{string(addr), peerErrors}
	ep := c.eps[k]
	delete(c.eps, k)
	if ep != nil && ep.Err() != nil {
		_ = ep.Close()
		return nil
	}
	return ep
}

func (c *EndpointCache) put(addr []byte, peerErrors bool, ep *ucx.Endpoint) error {
	k := epKey{string(addr), peerErrors}
	if c.eps == nil {
		c.eps = map[epKey]*ucx.Endpoint{}
	}
	if old := c.eps[k]; old != nil || len(c.eps) >= maxCachedEndpoints || ep.Err() != nil {
		return ep.Close()
	}
	c.eps[k] = ep
	return nil
}

// Len is the number of endpoints kept.
func (c *EndpointCache) Len() int {
	if c == nil {
		return 0
	}
	return len(c.eps)
}

// Close closes every kept endpoint (before the worker closes); a nil
// cache has none.
func (c *EndpointCache) Close() error {
	if c == nil {
		return nil
	}
	var errs []error
	for k, ep := range c.eps {
		errs = append(errs, ep.Close())
		delete(c.eps, k)
	}
	return errors.Join(errs...)
}

// Release ends the transport as Close does, but puts its healthy
// endpoints into c for the worker's next transport; an endpoint that
// failed, or one c cannot keep, is closed. The transport must have no
// operation in flight.
func (t *Transport) Release(c *EndpointCache) error {
	var errs []error
	for p, ep := range t.eps {
		if ep == nil {
			continue
		}
		ep.SetOnError(nil)
		errs = append(errs, c.put(t.addrs[p], t.peerErrs[p], ep))
		t.eps[p] = nil
	}
	return errors.Join(errs...)
}
