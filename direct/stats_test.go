package direct

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
)

// A device backend given Stats sums its calls' phases there: the leader
// waits for ARRIVEs and works, every other rank's call is its wait for
// DONE.
func TestDeviceStatsSumTheCalls(t *testing.T) {
	const p, calls = 3, 4
	j := newJob(t, coll.Allreduce, p, 4096, false, 3, true)
	stats := make([]Stats, p)
	var wg sync.WaitGroup
	errs := make([]error, p)
	for r := 0; r < p; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var call Call
			for i := 0; i < calls && errs[r] == nil; i++ {
				cfg := j.config(r)
				cfg.Device.Stats = &stats[r]
				if errs[r] = call.Begin(cfg); errs[r] != nil {
					return
				}
				for {
					done, err := call.Progress(time.Now().Add(time.Millisecond))
					if err != nil || done {
						errs[r] = err
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	for r := 0; r < p; r++ {
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, calls, stats[r].Calls, "rank %d", r)
		assert.Positive(t, stats[r].Done, "rank %d", r)
	}
	assert.Positive(t, stats[0].Arrive+stats[0].Work, "the leader's wait and work")
	assert.Zero(t, stats[1].Arrive+stats[1].Work+stats[2].Arrive+stats[2].Work, "the other ranks neither wait for ARRIVE nor work")
}
