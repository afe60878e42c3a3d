package cuda

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
)

// residentBlocks is the tests' resident kernel size: the most CTAs
// DefaultNodeGrid gives a call of up to 1 MiB.
const residentBlocks = 16

// withResident gives every rank of tm a resident kernel, closed at the
// test's end.
func withResident(t *testing.T, tm *nodeTeam) {
	t.Helper()
	for r, d := range tm.devs {
		res, err := d.NewResident(residentBlocks, tm.abortAddr[r])
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, res.Close()) })
		tm.res = append(tm.res, res)
	}
}

// residentCases are the calls the resident kernel has bodies for.
func residentCases() []nodeCallSpec {
	cs := []nodeCallSpec{{alg: devsync.Allgather, dt: coll.Uint8, op: coll.Sum}}
	for _, dt := range []coll.Dtype{coll.Float32, coll.Float64, coll.Float16, coll.Bfloat16, coll.Int32, coll.Int64} {
		for _, alg := range []devsync.Algorithm{devsync.OneShotAllreduce, devsync.ReduceScatter} {
			cs = append(cs, nodeCallSpec{alg: alg, dt: dt, op: coll.Sum})
		}
	}
	return cs
}

// The resident kernel's calls give the host's rank-order fold bit for
// bit, like the node kernels launched one by one: every body it has,
// teams of 2 GPUs up to all of them, 1 element to ~256 KB, aligned and
// misaligned buffers, grids of 1 to 16 of its CTAs, in place and not. Every
// few calls its kernel leaves and one call is launched as its own kernel
// on the same scratch regions and epochs, then the next post launches the
// resident kernel again: the two paths take turns without a reset.
func TestResidentMatchesHost(t *testing.T) {
	devs := nodeGPUs(t)
	rng := rand.New(rand.NewPCG(21, 22))
	const big = 262147
	for k := 2; k <= len(devs); k++ {
		tm := newNodeTeam(t, devs[:k], big+16*k, big+64)
		withResident(t, tm)
		cases, own := 0, 0
		for _, base := range residentCases() {
			esz := base.dt.Size()
			for i, count := range []int{1, 3, 1001, big / esz} {
				c := base
				c.count = count
				c.grid = NodeGrid{Blocks: []int{1, 3, 8, 16}[(i+cases)%4], Threads: ResidentThreads}
				if c.alg == devsync.ReduceScatter || c.alg == devsync.Allgather {
					c.count = max(1, count/k)
				}
				if i == 2 {
					c.inOff, c.outOff = esz, 3*esz
				}
				if cases%7 == 6 {
					for _, res := range tm.res {
						res.Leave()
					}
					c.ownKernel = true
					own++
				}
				checkNodeCall(t, tm, rng, c)
				c.ownKernel = false
				cases++
				c.inPlace = true
				checkNodeCall(t, tm, rng, c)
				cases++
			}
		}
		t.Logf("%d GPUs: %d resident calls and %d launched alone, bit-identical to the host, epochs 1..%d", k, cases-own, own, tm.epoch)
	}
}

// A call the resident kernel has no body for is refused with
// ErrNotResident and nothing posted; the allgather runs on any dtype.
func TestResidentRefusesWhatItHasNoBodyFor(t *testing.T) {
	devs := nodeGPUs(t)
	for _, c := range []struct {
		alg  devsync.Algorithm
		dt   coll.Dtype
		op   coll.Op
		want bool
	}{
		{devsync.OneShotAllreduce, coll.Float32, coll.Sum, true},
		{devsync.ReduceScatter, coll.Bfloat16, coll.Sum, true},
		{devsync.Allgather, coll.Int8, coll.Max, true},
		{devsync.OneShotAllreduce, coll.Float32, coll.Max, false},
		{devsync.TwoShotAllreduce, coll.Float32, coll.Sum, false},
		{devsync.ReduceScatter, coll.Uint8, coll.Sum, false},
	} {
		got, err := devs[0].ResidentRuns(c.alg, c.dt, c.op)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%v %v/%v", c.alg, c.dt, c.op)
	}
	tm := newNodeTeam(t, devs[:2], 1<<16, 1<<16)
	withResident(t, tm)
	tm.epoch = devsync.FirstEpoch
	err := tm.launchRank(nodeCallSpec{alg: devsync.OneShotAllreduce, dt: coll.Float32, op: coll.Max, count: 64, grid: NodeGrid{4, ResidentThreads}}, 0)
	require.ErrorIs(t, err, ErrNotResident)
	done, err := tm.res[0].Done()
	require.NoError(t, err)
	require.True(t, done, "nothing was posted")
}

// A rank that never posts leaves the others' resident calls waiting; the
// abort word ends them: their calls report the epoch in the status words,
// and the kernels leave the GPU.
func TestResidentAbort(t *testing.T) {
	devs := nodeGPUs(t)
	k := len(devs)
	tm := newNodeTeam(t, devs, 1<<16, 1<<16)
	withResident(t, tm)
	live := make([]int, k-1)
	for r := range live {
		live[r] = r
	}
	require.NoError(t, tm.launch(nodeCallSpec{alg: devsync.OneShotAllreduce, dt: coll.Float32, op: coll.Sum, count: 1000, grid: NodeGrid{4, ResidentThreads}, ranks: live}))
	time.Sleep(50 * time.Millisecond)
	for _, r := range live {
		done, err := tm.res[r].Done()
		require.NoError(t, err)
		require.False(t, done, "rank %d finished without the dead rank %d", r, k-1)
	}
	tm.abort.Store(devsync.AbortWord(k - 1))
	for _, r := range live {
		require.NoError(t, tm.res[r].Wait(), "rank %d's kernel leaves", r)
		w, err := tm.flags.Word(8 * (1 + r))
		require.NoError(t, err)
		require.Equal(t, uint64(tm.epoch), w.Load(), "rank %d's status word", r)
	}
}

// The host's time per small call, resident against a launch a call:
// GORING_CUDA_BENCH=1 ./cuda.test -test.run TestResidentBench -test.v.
// Every rank posts from its own goroutine and polls until its call ends
// before the next (as a UCC caller does), float32 sum; µs per call is the
// median over ranks of each rank's mean over 2000 calls.
func TestResidentBench(t *testing.T) {
	if os.Getenv(envBench) == "" {
		t.Skipf("set %s=1 to measure", envBench)
	}
	devs := nodeGPUs(t)
	k := len(devs)
	const maxBytes = 1 << 20
	tm := newNodeTeam(t, devs, maxBytes, maxBytes)
	withResident(t, tm)
	fmt.Printf("small node calls on %d x %s: host us per call, posted and polled to the end, float32 sum\n", k, must(devs[0].Name()))
	fmt.Printf("%-18s %10s %12s %12s %8s\n", "algorithm", "bytes", "launched_us", "resident_us", "ratio")
	for _, alg := range []devsync.Algorithm{devsync.OneShotAllreduce, devsync.ReduceScatter, devsync.Allgather} {
		for bytes := 16 << 10; bytes <= maxBytes; bytes *= 4 {
			count := bytes / 4
			switch alg {
			case devsync.ReduceScatter:
				count = bytes / 4 / k
			case devsync.Allgather:
				count = bytes / k
			}
			c := nodeCallSpec{alg: alg, dt: coll.Float32, op: coll.Sum, count: count, grid: DefaultNodeGrid(bytes)}
			c.ownKernel = true
			launched := hostCallTime(t, tm, c)
			c.ownKernel = false
			resident := hostCallTime(t, tm, c)
			fmt.Printf("%-18s %10d %12.1f %12.1f %8.2f\n", alg, bytes, launched, resident, launched/resident)
		}
	}
}

// hostCallTime is the median over ranks of µs per call of c, each rank
// posting and polling its calls in a loop.
func hostCallTime(t *testing.T, tm *nodeTeam, c nodeCallSpec) float64 {
	const warm, iters = 50, 2000
	k := len(tm.devs)
	if c.ownKernel {
		for _, res := range tm.res {
			res.Leave()
		}
	}
	first := tm.epoch + 1
	tm.epoch += devsync.Epoch(warm + iters)
	us := make([]float64, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for r := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := *tm
			ev, err := tm.devs[r].NewEvent(false)
			if err != nil {
				errs[r] = err
				return
			}
			defer ev.Destroy()
			var start time.Time
			for i := range warm + iters {
				if i == warm {
					start = time.Now()
				}
				rt.epoch = first + devsync.Epoch(i)
				if errs[r] = rt.launchRank(c, r); errs[r] != nil {
					return
				}
				if c.ownKernel {
					if errs[r] = ev.Record(tm.streams[r]); errs[r] != nil {
						return
					}
				}
				for {
					var done bool
					if c.ownKernel {
						done, errs[r] = ev.Done()
					} else {
						done, errs[r] = tm.res[r].Done()
					}
					if errs[r] != nil {
						return
					}
					if done {
						break
					}
				}
			}
			us[r] = time.Since(start).Seconds() * 1e6 / iters
		}()
	}
	wg.Wait()
	for r := range k {
		require.NoError(t, errs[r], "rank %d", r)
	}
	sort.Float64s(us)
	return us[k/2]
}
