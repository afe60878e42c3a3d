package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/exec/memtransport"
)

// The ping-pong runs over the in-memory network, echoes every byte, and
// its latency grows with an injected per-message delay: each one-way trip
// waits for a completion delayed by up to MaxDelay, so the mean one-way
// time must lie clearly above zero and below the round-trip budget.
func TestPingPongOverMemTransport(t *testing.T) {
	net := memtransport.New(2, memtransport.Options{Seed: 3, Reorder: true, MaxDelay: 2 * time.Millisecond})
	sizes := []int64{1, 7, 4096, 1 << 20}
	var lat [2][]float64
	var errs [2]error
	done := make(chan int, 2)
	for r := 0; r < 2; r++ {
		go func(r int) {
			lat[r], errs[r] = PingPong(context.Background(), memT{net.Endpoint(r)}, r, sizes, 5, 1, nil, nil)
			done <- r
		}(r)
	}
	<-done
	<-done
	for r := 0; r < 2; r++ {
		require.NoError(t, errs[r], "rank %d", r)
		require.Len(t, lat[r], len(sizes), "rank %d", r)
	}
	for i, us := range lat[0] {
		// Each one-way trip includes a receive completion delayed by a
		// uniform [0, 2 ms]: about 1 ms on average, so half a round trip
		// is well above 0.1 ms and well below a second.
		assert.Greater(t, us, 100.0, "case %d: %d bytes", i, sizes[i])
		assert.Less(t, us, 1e6, "case %d: %d bytes", i, sizes[i])
	}
	other, err := PingPong(context.Background(), memT{net.Endpoint(1)}, 2, sizes, 5, 1, nil, nil)
	assert.NoError(t, err)
	assert.Nil(t, other, "a rank other than 0 and 1 takes no part")
}

func TestPingPongProgramIsARoundTrip(t *testing.T) {
	p0, p1 := pingPongProgram(0, 64), pingPongProgram(1, 64)
	require.Len(t, p0.Steps, 2)
	require.Len(t, p1.Steps, 2)
	assert.Equal(t, []int32{0}, p0.Deps(1), "rank 0 receives the echo after its send")
	assert.Equal(t, []int32{0}, p1.Deps(1), "rank 1 echoes what it received")
}
