package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
	"github.com/goring-hpc/goring/exec/reduce"
)

// nodeBig is the odd size of the large cases, in bytes.
const nodeBig = 1000003

// The node kernels give, on every rank, the host's fold of the inputs in
// rank order, bit for bit: every algorithm, dtype and op, teams of 2 GPUs
// up to all of them, 1 element to ~1 MB, aligned and misaligned buffers
// (off 16 bytes, and off the element's own alignment), several grids, each call also in UCC's in-place layout; every call with
// the next epoch on the same scratch regions, no reset between calls.
func TestNodeCollectivesMatchHost(t *testing.T) {
	devs := nodeGPUs(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for k := 2; k <= len(devs); k++ {
		// Slots a vector per rank above the largest message: the two-shot
		// allreduce's regions are rounded up to whole vectors.
		tm := newNodeTeam(t, devs[:k], nodeBig+16*k, nodeBig+64)
		cases := 0
		for _, alg := range devsync.Algorithms {
			for _, dt := range coll.Dtypes {
				for _, op := range coll.Ops {
					if !coll.Supports(op, dt) || (!alg.Reduces() && (dt != coll.Uint8 || op != coll.Sum)) {
						continue
					}
					esz := dt.Size()
					counts := []int{1, 3, 1001}
					if k == len(devs) || (dt == coll.Float32 && op == coll.Sum) {
						counts = append(counts, nodeBig/esz)
					}
					for i, count := range counts {
						c := nodeCallSpec{alg: alg, dt: dt, op: op, count: count, root: (i + cases) % k,
							grid: NodeGrid{Blocks: []int{1, 3, 8, 64}[(i+cases)%4], Threads: []int{512, 256}[cases%2]}}
						if b := alg.Base(); b == devsync.ReduceScatter || b == devsync.Allgather {
							c.count = max(1, count/k) // the whole message is about count elements
						}
						if alg.LL() && !nodeLLCount(&c, k) {
							continue // beyond the LL area
						}
						if i == 2 {
							c.inOff, c.outOff = esz, 3*esz // the element path (LL: the byte path below 8 bytes)
						}
						checkNodeCall(t, tm, rng, c)
						cases++
						// The same call in UCC's in-place layout.
						c.inPlace = true
						checkNodeCall(t, tm, rng, c)
						cases++
						if i == 2 && alg.Reduces() && esz > 1 {
							// Buffers off their elements' alignment (a
							// caller's may start at any byte: team/aligned.go),
							// in both layouts.
							c.inOff, c.outOff, c.inPlace = 1, esz+1, false
							checkNodeCall(t, tm, rng, c)
							c.inPlace = true
							checkNodeCall(t, tm, rng, c)
							cases += 2
						}
					}
				}
			}
		}
		t.Logf("%d GPUs: %d cases bit-identical to the host, epochs 1..%d", k, cases, tm.epoch)
	}
}

// checkNodeCall runs one call of tm with fresh inputs and compares every
// rank's output with the host reference.
func checkNodeCall(t *testing.T, tm *nodeTeam, rng *rand.Rand, c nodeCallSpec) {
	t.Helper()
	checkNodeCallRun(t, tm, rng, c, func() {
		require.NoError(t, tm.launch(c))
		tm.sync(t, 20*time.Second)
	})
}

// checkNodeCallRun is checkNodeCall with run launching the call and
// waiting for its end.
func checkNodeCallRun(t *testing.T, tm *nodeTeam, rng *rand.Rand, c nodeCallSpec, run func()) {
	t.Helper()
	k := len(tm.devs)
	inBytes, outBytes := c.shapeBytes(k)
	ins := make([][]byte, k)
	outAt := make([]int, k) // where rank r's output starts in its out buffer
	for r := range ins {
		ins[r] = finiteInput(rng, c.dt, inBytes/c.dt.Size())
		require.NoError(t, tm.out[r].Memset(0, tm.out[r].Len(), 0xee))
		if c.inPlace {
			var inAt int
			inAt, outAt[r] = c.inPlaceBuffers(r, inBytes, outBytes)
			require.NoError(t, tm.out[r].CopyFromHost(inAt, ins[r]))
		} else {
			outAt[r] = c.outOff
			require.NoError(t, tm.in[r].CopyFromHost(c.inOff, ins[r]))
		}
	}
	run()
	want := append([]byte(nil), ins[0]...)
	switch {
	case c.alg == devsync.Bcast:
		want = ins[c.root]
	case c.alg.Reduces():
		host, err := reduce.Kernel(c.dt, c.op)
		require.NoError(t, err)
		for _, in := range ins[1:] {
			host(want, in)
		}
	default:
		want = bytes.Join(ins, nil)
	}
	for r := range k {
		w := want
		if c.alg.Base() == devsync.ReduceScatter {
			w = want[r*outBytes : (r+1)*outBytes]
		}
		got := make([]byte, outBytes)
		require.NoError(t, tm.out[r].CopyToHost(got, outAt[r]))
		sameNaNs(w, got, c.dt)
		require.True(t, bytes.Equal(w, got), "%v %v/%v on %d GPUs, count %d, root %d, grid %+v, offsets %d/%d, in place %v, epoch %d: rank %d differs from the host at byte %d",
			c.alg, c.dt, c.op, k, c.count, c.root, c.grid, c.inOff, c.outOff, c.inPlace, tm.epoch, r, firstDifference(w, got))
	}
}

// nodeLLCount makes c an LL call: its count rounded up to whole 8-byte
// words (devsync/ll.go); false where its lines would not fit the LL area.
func nodeLLCount(c *nodeCallSpec, k int) bool {
	esz := 1
	if c.alg.Reduces() {
		esz = c.dt.Size()
	}
	w := max(1, 8/esz)
	c.count = (c.count + w - 1) / w * w
	return devsync.Shape{Alg: c.alg, Ranks: k, Blocks: c.grid.Blocks, Count: c.count, ElemSize: esz}.Validate() == nil
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Hundreds of allreduces back to back with no host sync between them, each
// call's output the next one's input: every rank ends with
// k^(calls-1) times the first sum (int32, wrapping), which it only gets if
// no call read a slot of another call.
func TestNodeBackToBack(t *testing.T) {
	devs := nodeGPUs(t)
	k := len(devs)
	const count, calls = 4099, 300
	slot := devsync.Shape{Alg: devsync.TwoShotAllreduce, Ranks: k, Count: count, ElemSize: 4}.SlotBytes() // two-shot's regions round up
	// Buffers of count+1 elements: the LL call's count (whole 8-byte words).
	tm := newNodeTeam(t, devs, slot, (count+1)*4)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, alg := range []devsync.Algorithm{devsync.OneShotAllreduce, devsync.TwoShotAllreduce, devsync.LLOneShotAllreduce} {
		count := count
		if alg.LL() {
			count++ // whole 8-byte words
		}
		for _, grid := range []NodeGrid{{1, 512}, {4, 256}, {32, 512}} {
			want := make([]uint32, count)
			for r := range k {
				in := make([]byte, count*4)
				for i := range count {
					v := rng.Uint32()
					binary.LittleEndian.PutUint32(in[i*4:], v)
					want[i] += v
				}
				require.NoError(t, tm.in[r].CopyFromHost(0, in))
			}
			for range calls - 1 {
				for i := range want {
					want[i] *= uint32(k)
				}
			}
			for c := range calls {
				require.NoError(t, tm.launch(nodeCallSpec{alg: alg, dt: coll.Int32, op: coll.Sum, count: count, grid: grid, swap: c%2 == 1}))
			}
			tm.sync(t, 30*time.Second)
			res := tm.out
			if calls%2 == 0 {
				res = tm.in
			}
			for r := range k {
				got := make([]byte, count*4)
				require.NoError(t, res[r].CopyToHost(got, 0))
				for i := range count {
					require.Equal(t, want[i], binary.LittleEndian.Uint32(got[i*4:]), "%v grid %+v rank %d element %d after %d calls", alg, grid, r, i, calls)
				}
			}
		}
	}
	t.Logf("%d GPUs: back-to-back calls right up to epoch %d", k, tm.epoch)
}

// A rank that never launches its kernel leaves the others spinning; the
// abort word set by the host ends them, and each reports the call's epoch
// in its status word.
func TestNodeAbort(t *testing.T) {
	devs := nodeGPUs(t)
	k := len(devs)
	tm := newNodeTeam(t, devs, 1<<16, 1<<16)
	live := make([]int, k-1)
	for r := range live {
		live[r] = r
	}
	for _, alg := range []devsync.Algorithm{devsync.OneShotAllreduce, devsync.TwoShotAllreduce, devsync.Allgather, devsync.Bcast,
		devsync.LLOneShotAllreduce, devsync.LLReduceScatter, devsync.LLAllgather} {
		tm.abort.Store(0)
		require.NoError(t, tm.launch(nodeCallSpec{alg: alg, dt: coll.Float32, op: coll.Sum, count: 1000, grid: NodeGrid{4, 256}, ranks: live}))
		time.Sleep(50 * time.Millisecond)
		for _, r := range live {
			done, err := tm.streams[r].Done()
			require.NoError(t, err)
			require.False(t, done, "%v: rank %d finished without the dead rank %d", alg, r, k-1)
		}
		tm.abort.Store(devsync.AbortWord(k - 1))
		tm.sync(t, 5*time.Second)
		for _, r := range live {
			require.True(t, tm.ended(r), "%v: rank %d's done words after its aborted kernel", alg, r)
			w, err := tm.flags.Word(8 * (1 + r))
			require.NoError(t, err)
			require.Equal(t, uint64(tm.epoch), w.Load(), "%v: rank %d's status word", alg, r)
		}
		dead, _ := devsync.DeadRank(tm.abort.Load())
		t.Logf("%v: ranks %v ended their wait for rank %d at epoch %d", alg, live, dead, tm.epoch)
	}
}

// The node collectives' time per call, all GPUs, back to back:
// GORING_CUDA_BENCH=1 ./cuda.test -test.run TestNodeBench -test.v. Bytes
// are the whole message (allreduce's vector, reduce_scatter's input,
// allgather's output), float32 sum; each rank launches its calls from its
// own goroutine and times them with events on its stream; a call's time
// is the slowest rank's. The sweep: 1 to 128 CTAs of 512 and of 1024
// threads; "grid" is blocks x threads. GORING_NODE_BENCH_MAX=N stops at
// N bytes (default 256 MiB).
func TestNodeBench(t *testing.T) {
	if os.Getenv(envBench) == "" {
		t.Skipf("set %s=1 to measure", envBench)
	}
	skipOnOneGPUTeam(t)
	devs := nodeGPUs(t)
	k := len(devs)
	maxBytes := 256 << 20
	if v := os.Getenv("GORING_NODE_BENCH_MAX"); v != "" { // a shorter sweep: the sizes up to v bytes
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "GORING_NODE_BENCH_MAX")
		maxBytes = max(16<<10, n)
	}
	tm := newNodeTeam(t, devs, maxBytes, maxBytes)
	for r := range k {
		require.NoError(t, tm.in[r].Memset(0, maxBytes, 0))
	}
	fmt.Printf("node collectives on %d x %s (float32 sum; us per call, best grid and the default's)\n", k, must(devs[0].Name()))
	fmt.Printf("%-18s %10s %10s %8s %12s %8s %10s\n", "algorithm", "bytes", "us", "grid", "default_us", "grid", "algbw_GB/s")
	for _, alg := range devsync.Algorithms {
		for bytes := 16 << 10; bytes <= maxBytes; bytes *= 2 {
			count := bytes / 4
			switch alg.Base() {
			case devsync.ReduceScatter:
				count = bytes / 4 / k
			case devsync.Allgather:
				count = bytes / k
			case devsync.Bcast:
				count = bytes
			}
			if c := (nodeCallSpec{alg: alg, dt: coll.Float32, count: count, grid: NodeGrid{1, 512}}); alg.LL() && !nodeLLCount(&c, k) {
				continue // beyond the LL area
			}
			def := DefaultNodeGrid(bytes)
			// Untimed: the first calls of a size touch new pages of the
			// slots (peers' mappings included) and ran several times
			// slower, which fell on whichever grid came first.
			timeNodeCalls(t, tm, nodeCallSpec{alg: alg, dt: coll.Float32, op: coll.Sum, count: count, grid: def}, bytes)
			defUS := timeNodeCalls(t, tm, nodeCallSpec{alg: alg, dt: coll.Float32, op: coll.Sum, count: count, grid: def}, bytes)
			best, bestUS := def, defUS
			for _, th := range []int{512, 1024} {
				for _, b := range []int{1, 4, 16, 32, 64, 96, 128} {
					g := NodeGrid{Blocks: b, Threads: th}
					if g == def {
						continue
					}
					if us := timeNodeCalls(t, tm, nodeCallSpec{alg: alg, dt: coll.Float32, op: coll.Sum, count: count, grid: g}, bytes); us < bestUS {
						best, bestUS = g, us
					}
				}
			}
			fmt.Printf("%-18s %10d %10.1f %8s %12.1f %8s %10.1f\n", alg, bytes, bestUS, gridString(best), defUS, gridString(def), float64(bytes)/bestUS/1e3)
		}
	}
}

// gridString is a grid as blocks x threads.
func gridString(g NodeGrid) string { return fmt.Sprintf("%dx%d", g.Blocks, g.Threads) }

// timeNodeCalls is µs per call of c over back-to-back calls.
func timeNodeCalls(t *testing.T, tm *nodeTeam, c nodeCallSpec, bytes int) float64 {
	iters := min(100, max(5, (2<<30)/bytes))
	const warm = 5
	k := len(tm.devs)
	first := tm.epoch + 1
	tm.epoch += devsync.Epoch(warm + iters) // the ranks' goroutines take their epochs from first
	times := make([]time.Duration, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for r := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = func() error {
				s := tm.streams[r]
				start, err := tm.devs[r].NewEvent(true)
				if err != nil {
					return err
				}
				defer start.Destroy()
				end, err := tm.devs[r].NewEvent(true)
				if err != nil {
					return err
				}
				defer end.Destroy()
				// The team as it is (done words, shared-GPU grid fit), with an
				// epoch of this goroutine's own.
				rt := *tm
				for i := range warm + iters {
					if i == warm {
						if err := start.Record(s); err != nil {
							return err
						}
					}
					rt.epoch = first + devsync.Epoch(i)
					if err := (&rt).launchRank(c, r); err != nil {
						return err
					}
				}
				if err := end.Record(s); err != nil {
					return err
				}
				if err := end.Synchronize(); err != nil {
					return err
				}
				times[r], err = Elapsed(start, end)
				return err
			}()
		}()
	}
	wg.Wait()
	var worst time.Duration
	for r := range k {
		require.NoError(t, errs[r], "rank %d", r)
		worst = max(worst, times[r])
	}
	return worst.Seconds() * 1e6 / float64(iters)
}

// A call whose shape needs more slot than the team's is refused before
// launch: on the device it would store past the slot. The two-shot
// allreduce's regions round each rank's chunk up to whole vectors, so a
// slot of exactly the vector's bytes is too small for an odd count.
func TestNodeRefusesASlotTooSmall(t *testing.T) {
	devs := nodeGPUs(t)
	k := len(devs)
	const count = 1001 // float32: chunks of 251 elements round up to 252
	tm := newNodeTeam(t, devs, count*4, count*4)
	need := devsync.Shape{Alg: devsync.TwoShotAllreduce, Ranks: k, Count: count, ElemSize: 4}.SlotBytes()
	require.Greater(t, need, tm.slotBytes)
	tm.epoch = devsync.FirstEpoch // a valid epoch: only the slot is wrong
	err := tm.launchRank(nodeCallSpec{alg: devsync.TwoShotAllreduce, dt: coll.Float32, op: coll.Sum, count: count, grid: NodeGrid{1, 256}}, 0)
	require.ErrorContains(t, err, "needs slots of")
}
