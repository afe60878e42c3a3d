package cuda

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
)

// A call's done words end it (devsync "Completion"). While a peer has
// not launched, no rank's words say its call ended; once they all hold
// the epoch, the outputs are complete: they are read at once, by copies
// on the legacy stream, which do not wait for the team's non-blocking
// streams, and compared with the host's. Every algorithm, grids of 1 to
// 128 CTAs, teams of one GPU up to all of them.
func TestNodeDoneWordsEndTheCall(t *testing.T) {
	devs := nodeGPUsFrom(t, 1)
	rng := rand.New(rand.NewPCG(21, 22))
	const bytes = 1 << 20
	for k := 1; k <= len(devs); k++ {
		tm := newNodeTeam(t, devs[:k], bytes+16*k, bytes+64)
		for _, alg := range devsync.Algorithms {
			for _, g := range []NodeGrid{{1, 256}, {16, 512}, {128, 512}} {
				c := nodeCallSpec{alg: alg, dt: coll.Float32, op: coll.Sum, count: bytes / 4, grid: g}
				switch alg.Base() {
				case devsync.ReduceScatter:
					c.count = bytes / 4 / k
				case devsync.Allgather:
					c.dt, c.count = coll.Uint8, bytes/k
				case devsync.Bcast:
					c.dt, c.count = coll.Uint8, bytes
				}
				if alg.LL() {
					c.count /= 8 // the LL area holds calls of up to 512 KiB a rank
					if !nodeLLCount(&c, k) {
						continue
					}
				}
				checkNodeCallRun(t, tm, rng, c, func() {
					tm.epoch = tm.epoch.Next()
					for r := range k - 1 {
						require.NoError(t, tm.launchRank(c, r))
					}
					if k > 1 {
						time.Sleep(20 * time.Millisecond)
						for r := range k - 1 {
							require.False(t, tm.ended(r), "%v grid %+v: rank %d's words say its call ended before rank %d launched", alg, g, r, k-1)
						}
					}
					require.NoError(t, tm.launchRank(c, k-1))
					for r := range k {
						tm.waitEnded(t, r, 20*time.Second)
					}
				})
			}
		}
		t.Logf("%d GPU(s): every call's outputs complete when its done words said so, epochs 1..%d", k, tm.epoch)
	}
}

// waitEnded spins on rank r's done words; past timeout it aborts, waits
// for the streams and fails.
func (tm *nodeTeam) waitEnded(t *testing.T, r int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !tm.ended(r) {
		if time.Now().After(deadline) {
			tm.abort.Store(1 << 62)
			for _, s := range tm.streams {
				_ = s.Synchronize()
			}
			t.Fatalf("rank %d's done words still below epoch %d after %v: aborted", r, tm.epoch, timeout)
		}
	}
}

// The host's whole cycle of a small node call on one GPU (a team of one
// rank: the launch, the kernel, and seeing its end), two ways: an event
// recorded behind the kernel and polled (cuEventQuery), as the team layer
// did, and the kernel's done words polled in host memory. The two
// alternate in rounds of 200 calls; medians and the 10th and 90th
// percentiles of 2000 calls each. GORING_CUDA_BENCH=1 ./cuda.test
// -test.run TestNodeCompletionHostTime -test.v
func TestNodeCompletionHostTime(t *testing.T) {
	if os.Getenv(envBench) == "" {
		t.Skipf("set %s=1 to measure", envBench)
	}
	devs := nodeGPUsFrom(t, 1)[:1]
	const calls, round = 2000, 200
	tm := newNodeTeam(t, devs, 1<<20, 1<<20)
	ev, err := devs[0].NewEvent(false)
	require.NoError(t, err)
	t.Cleanup(func() { ev.Destroy() })
	fmt.Printf("host time per node call on 1 x %s, launch to its end seen (us; median, p10-p90 of %d)\n", must(devs[0].Name()), calls)
	for _, bytes := range []int{16 << 10, 256 << 10, 1 << 20} {
		c := nodeCallSpec{alg: devsync.OneShotAllreduce, dt: coll.Float32, op: coll.Sum, count: bytes / 4, grid: DefaultNodeGrid(bytes)}
		byEvent := func() {
			tm.noDone = true
			tm.epoch = tm.epoch.Next()
			require.NoError(t, tm.launchRank(c, 0))
			require.NoError(t, ev.Record(tm.streams[0]))
			for {
				done, err := ev.Done()
				require.NoError(t, err)
				if done {
					return
				}
			}
		}
		byWords := func() {
			tm.noDone = false
			tm.epoch = tm.epoch.Next()
			require.NoError(t, tm.launchRank(c, 0))
			for !tm.ended(0) {
			}
		}
		var evT, wordT []time.Duration
		for range 2 * round { // warm-up, untimed
			byEvent()
			byWords()
		}
		for len(evT) < calls {
			for _, m := range []struct {
				f  func()
				ds *[]time.Duration
			}{{byEvent, &evT}, {byWords, &wordT}} {
				for range round {
					s := time.Now()
					m.f()
					*m.ds = append(*m.ds, time.Since(s))
				}
				tm.sync(t, 10*time.Second)
			}
		}
		fmt.Printf("one-shot allreduce %8d B, %3d CTAs: event %s, done words %s\n", bytes, c.grid.Blocks, percentiles(evT), percentiles(wordT))
	}
}

// percentiles is "median (p10-p90)" of ds in µs.
func percentiles(ds []time.Duration) string {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	us := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Nanoseconds()) / 1e3 }
	return fmt.Sprintf("%.2f (%.2f-%.2f)", us(0.5), us(0.1), us(0.9))
}
