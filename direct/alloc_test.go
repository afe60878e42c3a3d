package direct

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// A progress function polls a call millions of times a second while it
// waits for its peers (UCC's ucc_collective_test). A poll must allocate
// nothing: one allocation a poll is a garbage collection every few
// milliseconds in every process of a job. Each case begins one rank's
// call alone, so that it waits as it does behind a late peer, and polls
// it with a zero wait, as a progress function does.
func TestWaitingCallPollsWithoutAllocating(t *testing.T) {
	const p, B = 3, 1024
	dev := newJob(t, coll.Allreduce, p, B, false, 1, true)
	host := newHostJob(p, 1, 1)
	host.buffers(coll.Allreduce, B, false, rand.New(rand.NewPCG(1, 2)))
	for _, tc := range []struct {
		name string
		cfg  func(r int) Config
		rank int
	}{
		{"device leader waits for ARRIVE", dev.config, 0},
		{"device rank waits for DONE", dev.config, 1},
		{"host rank waits for ARRIVE", host.config, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var call Call
			require.NoError(t, call.Begin(tc.cfg(tc.rank)))
			allocs := testing.AllocsPerRun(1000, func() {
				if done, err := call.Progress(time.Time{}); done || err != nil {
					t.Fatalf("a call ended without its peers: done %v, %v", done, err)
				}
			})
			require.Zero(t, allocs, "allocations per poll")
			require.Error(t, call.Abort(errTestOver))
		})
	}
}

var errTestOver = errors.New("the test is over")

func (j *job) config(r int) Config {
	return Config{Collective: coll.Allreduce, Rank: r, Size: len(j.src), Src: j.src[r], Dst: j.dst[r], Dtype: coll.Float32, Op: coll.Sum,
		Transport: j.net.Endpoint(r), Device: &Device{Mapper: j.mappers[r], Local: j.locals[r]}, Deadline: time.Now().Add(time.Hour)}
}

func (j *hostJob) config(r int) Config {
	return Config{Collective: coll.Allreduce, Rank: r, Size: len(j.teams), Src: exec.HostRegion(j.src[r]), Dst: exec.HostRegion(j.dst[r]),
		Dtype: coll.Float32, Op: coll.Sum, Transport: j.net.Endpoint(r), Host: j.teams[r], Deadline: time.Now().Add(time.Hour)}
}
