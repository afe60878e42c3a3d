package ucxmp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/ucx"
)

// A transport released into a cache hands its endpoints to the worker's
// next transport for the same addresses; an address the cache does not
// leaves out stays kept, and a cache closes what it keeps.
func TestEndpointCacheReuse(t *testing.T) {
	ts := meshWith(t, 2, func(r int) Options { return Options{Endpoints: &EndpointCache{}} })
	w := ts[0].Worker()
	addrs := ts[0].addrs
	first := append([]*ucx.Endpoint(nil), ts[0].eps...)
	cache := &EndpointCache{}
	require.NoError(t, ts[0].Release(cache))
	assert.Equal(t, 2, cache.Len())
	again, err := New(w, 0, addrs, Options{Endpoints: cache})
	require.NoError(t, err)
	assert.Zero(t, cache.Len(), "the second transport did not take the kept endpoints")
	for p := range first {
		assert.Same(t, first[p], again.eps[p], "peer %d: a new endpoint although one was kept", p)
	}
	// A transport of only some of the addresses takes only theirs.
	require.NoError(t, again.Release(cache))
	part, err := New(w, 0, [][]byte{addrs[0], nil}, Options{Endpoints: cache})
	require.NoError(t, err)
	assert.Same(t, first[0], part.eps[0])
	assert.Equal(t, 1, cache.Len(), "the endpoint to the peer left out was taken")
	require.NoError(t, part.Close())
	require.NoError(t, cache.Close())
	assert.Zero(t, cache.Len())
	var none *EndpointCache
	assert.NoError(t, none.Close())
	ts[0].eps = make([]*ucx.Endpoint, 2) // released: the mesh's cleanup closes nothing twice
}
