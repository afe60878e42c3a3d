package bench

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A rank's own workers take the given transports, with UCX's cuda ones
// for device buffers, unless UCX_TLS says otherwise.
func TestUCXConfig(t *testing.T) {
	t.Setenv("UCX_TLS", "")
	assert.Equal(t, map[string]string{"TLS": "self,sm"}, ucxConfig("self,sm", false))
	assert.Equal(t, map[string]string{"TLS": "self,sm,cuda"}, ucxConfig("self,sm", true))
	t.Setenv("UCX_TLS", "tcp")
	assert.Empty(t, ucxConfig("self,sm", true), "UCX_TLS is UCX's to read")
}

// A failed join closes what it opened and returns no job.
func TestJoinedClosesOnError(t *testing.T) {
	closed := 0
	rj := &RankJob{}
	rj.OnClose(func() { closed++ })
	got, err := joined(rj, errors.New("no peer"))
	assert.Nil(t, got)
	assert.Error(t, err)
	assert.Equal(t, 1, closed)
	rj = &RankJob{}
	got, err = joined(rj, nil)
	assert.NoError(t, err)
	assert.Same(t, rj, got)
}
