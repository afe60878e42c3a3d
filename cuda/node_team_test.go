package cuda

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
)

// nodeGPUs opens every GPU (up to devsync.MaxRanks) with peer access
// between all pairs, or skips with the reason: no driver, fewer than two
// GPUs, or GPUs that cannot reach each other. With envOneGPURanks set it
// gives GPU 0 that many times instead (oneGPURanks).
func nodeGPUs(t *testing.T) []*Device { return nodeGPUsFrom(t, 2) }

// envOneGPURanks (2 to devsync.MaxRanks) makes the node tests' teams that
// many ranks on GPU 0, each with its own stream, scratch, buffers and done
// words: the flag, epoch, abort and done-word protocol between ranks, on a
// machine of one GPU. The ranks' kernels are streams of one context, so
// they run on the GPU at once, as the kernels of a node's GPUs do; a
// peer's slot is then memory of the same GPU, not across NVLink. Grids are
// capped so that every rank's CTAs are resident together
// (nodeTeam.fitGrid): a CTA that spins for a peer's CTA which cannot be
// scheduled would wait forever. Timings mean nothing then (the
// benchmarks skip).
const envOneGPURanks = "GORING_NODE_RANKS_ON_ONE_GPU"

// oneGPURanks is envOneGPURanks's value, 0 where it is not set; a value
// outside 2..devsync.MaxRanks fails the test.
func oneGPURanks(t *testing.T) int {
	t.Helper()
	v := os.Getenv(envOneGPURanks)
	if v == "" {
		return 0
	}
	k, err := strconv.Atoi(v)
	require.NoError(t, err, envOneGPURanks)
	require.True(t, k >= 2 && k <= devsync.MaxRanks, "%s=%d: 2 to %d", envOneGPURanks, k, devsync.MaxRanks)
	return k
}

// nodeGPUsFrom is nodeGPUs for tests that run on fewer GPUs: teams of
// one rank too (no peer, no wait: the kernels' host side alone).
func nodeGPUsFrom(t *testing.T, least int) []*Device {
	t.Helper()
	if k := oneGPURanks(t); k > 0 {
		d := devices(t, 1)[0]
		return slices.Repeat([]*Device{d}, k)
	}
	n, err := DeviceCount()
	if IsNoDriver(err) {
		t.Skipf("skipping GPU test: %v", err)
	}
	require.NoError(t, err, "driver present but broken")
	if n < least {
		t.Skipf("skipping: the test needs %d GPUs, the driver shows %d", least, n)
	}
	devs := devices(t, min(n, devsync.MaxRanks))
	for i := range devs {
		for j := i + 1; j < len(devs); j++ {
			enablePeers(t, devs[i], devs[j])
		}
	}
	return devs
}

// skipOnOneGPUTeam skips a benchmark when the team's ranks share GPU 0.
func skipOnOneGPUTeam(t *testing.T) {
	if oneGPURanks(t) > 0 {
		t.Skipf("%s is set: ranks sharing a GPU time nothing of a node", envOneGPURanks)
	}
}

// nodeTeam is one process driving a node collective on several GPUs: a
// scratch region, input and output per GPU, a stream per GPU, host-mapped
// words (the abort word at byte 0, rank r's status word at 8*(1+r), its
// done words at nodeDoneAt + r*devsync.DoneBytes), and the team's epoch.
type nodeTeam struct {
	devs             []*Device
	streams          []*Stream
	scratch, in, out []*Buffer
	slotBytes        int
	flags            *HostBuffer
	abort            *atomic.Uint64
	abortAddr        []DevicePtr
	statusAddr       []DevicePtr
	doneAddr         []DevicePtr
	done             [][]atomic.Uint64
	epoch            devsync.Epoch
	blocks           int  // CTAs of the last launch
	noDone           bool // launch without done words (the kernels' path before them)
	// share is the most ranks on one GPU (1: a GPU each) and sms that
	// GPU's multiprocessors: with share > 1, fitGrid caps the grids.
	share, sms int
}

// nodeDoneAt is where the ranks' done words start in nodeTeam's words.
const nodeDoneAt = 1024

// newNodeTeam sets up a team whose slots hold slotPayload bytes and whose
// buffers ioBytes.
func newNodeTeam(t *testing.T, devs []*Device, slotPayload, ioBytes int) *nodeTeam {
	t.Helper()
	tm := &nodeTeam{devs: devs, slotBytes: devsync.SlotBytes(slotPayload), epoch: devsync.FirstEpoch - 1}
	var err error
	tm.flags, err = devs[0].AllocMappedHost(nodeDoneAt + devsync.MaxRanks*devsync.DoneBytes)
	require.NoError(t, err)
	t.Cleanup(func() { tm.flags.Free() })
	tm.abort, err = tm.flags.Word(0)
	require.NoError(t, err)
	onGPU := map[*Device]int{}
	for _, d := range devs {
		onGPU[d]++
		tm.share = max(tm.share, onGPU[d])
	}
	if tm.share > 1 {
		tm.sms, err = devs[0].SMCount()
		require.NoError(t, err)
	}
	for r, d := range devs {
		s, err := d.NewStream()
		require.NoError(t, err)
		t.Cleanup(func() { s.Destroy() })
		tm.streams = append(tm.streams, s)
		sc, err := d.Alloc(devsync.ScratchBytes(tm.slotBytes))
		require.NoError(t, err)
		require.NoError(t, sc.Memset(0, devsync.ZeroedBytes, 0), "flags start below every epoch, LL lines with no tag")
		in, err := d.Alloc(ioBytes)
		require.NoError(t, err)
		out, err := d.Alloc(ioBytes)
		require.NoError(t, err)
		t.Cleanup(func() { sc.Free(); in.Free(); out.Free() })
		tm.scratch, tm.in, tm.out = append(tm.scratch, sc), append(tm.in, in), append(tm.out, out)
		a, err := tm.flags.MappedAddr(d, 0)
		require.NoError(t, err)
		st, err := tm.flags.MappedAddr(d, 8*(1+r))
		require.NoError(t, err)
		tm.abortAddr, tm.statusAddr = append(tm.abortAddr, a), append(tm.statusAddr, st)
		dn, err := tm.flags.MappedAddr(d, nodeDoneAt+r*devsync.DoneBytes)
		require.NoError(t, err)
		w, err := tm.flags.Words(nodeDoneAt+r*devsync.DoneBytes, devsync.DoneBytes/8)
		require.NoError(t, err)
		tm.doneAddr, tm.done = append(tm.doneAddr, dn), append(tm.done, w)
	}
	return tm
}

// call is one collective of the team: every rank's kernel launched on its
// stream with the next epoch, inputs and outputs at the given offsets.
type nodeCallSpec struct {
	alg           devsync.Algorithm
	dt            coll.Dtype
	op            coll.Op
	count         int
	grid          NodeGrid
	inOff, outOff int
	swap          bool // in and out exchanged (chained calls)
	// inPlace: UCC's in-place layout, all in out (at outOff): an
	// allreduce's input is its output, a reduce_scatter's input is the
	// whole of it and its output the rank's block, an allgather's input is
	// the rank's block of its output (inOff is not used).
	inPlace bool
	ranks   []int
	root    int // bcast's
}

// inPlaceBuffers are where an in-place call of rank r reads and writes,
// in bytes from the start of out, for a shape whose input and output are
// inBytes and outBytes long.
func (c nodeCallSpec) inPlaceBuffers(r, inBytes, outBytes int) (in, out int) {
	switch c.alg.Base() {
	case devsync.ReduceScatter:
		return c.outOff, c.outOff + r*outBytes
	case devsync.Allgather:
		return c.outOff + r*inBytes, c.outOff
	}
	return c.outOff, c.outOff
}

// shapeBytes is the bytes of a rank's input and output for a team of k.
func (c nodeCallSpec) shapeBytes(k int) (in, out int) {
	s := devsync.Shape{Alg: c.alg, Ranks: k, Blocks: c.grid.Blocks, Count: c.count, ElemSize: c.dt.Size()}
	if !c.alg.Reduces() {
		s.ElemSize = 1
	}
	return s.InElems() * s.ElemSize, s.OutElems() * s.ElemSize
}

func (tm *nodeTeam) launch(c nodeCallSpec) error {
	tm.epoch = tm.epoch.Next()
	ranks := c.ranks
	if ranks == nil {
		for r := range tm.devs {
			ranks = append(ranks, r)
		}
	}
	for _, r := range ranks {
		if err := tm.launchRank(c, r); err != nil {
			return err
		}
	}
	return nil
}

func (tm *nodeTeam) launchRank(c nodeCallSpec, r int) error {
	scratch := make([]DevicePtr, len(tm.devs))
	for q := range scratch {
		scratch[q] = tm.scratch[q].Ptr()
	}
	in, out := tm.in[r], tm.out[r]
	if c.swap {
		in, out = out, in
	}
	inAt, outAt := in.Ptr()+DevicePtr(c.inOff), out.Ptr()+DevicePtr(c.outOff)
	if c.inPlace {
		ib, ob := c.shapeBytes(len(tm.devs))
		i, o := c.inPlaceBuffers(r, ib, ob)
		inAt, outAt = out.Ptr()+DevicePtr(i), out.Ptr()+DevicePtr(o)
	}
	grid := tm.fitGrid(c.grid)
	tm.blocks = grid.Blocks
	done := tm.doneAddr[r]
	if tm.noDone {
		done = 0
	}
	return NodeLaunchAsync(tm.streams[r], NodeCall{Alg: c.alg, Dtype: c.dt, Op: c.op, Scratch: scratch, Rank: r,
		In: inAt, Out: outAt, Count: c.count, Root: c.root, SlotBytes: tm.slotBytes,
		Epoch: tm.epoch, Abort: tm.abortAddr[r], Status: tm.statusAddr[r], Done: done}, grid)
}

// fitGrid is g, or, where ranks share a GPU, g with at most one CTA a
// multiprocessor for each of them: every rank's CTAs fit on the GPU at
// once whatever their threads and registers (a kernel launches only if
// one of its CTAs fits a multiprocessor). The block count changes no
// buffer's layout (devsync.Shape's in and out sizes do not depend on it).
func (tm *nodeTeam) fitGrid(g NodeGrid) NodeGrid {
	if tm.share > 1 {
		g.Blocks = max(1, min(g.Blocks, tm.sms/tm.share))
	}
	return g
}

// ended says whether rank r's kernel of the last call has released the
// epoch into every done word of its grid.
func (tm *nodeTeam) ended(r int) bool {
	return devsync.Ended(func(b int) uint64 { return tm.done[r][b].Load() }, tm.blocks, tm.epoch)
}

// sync waits for every rank's stream; past timeout it sets the abort word
// (so spinning kernels return), waits again and fails: a hang is a bug
// the test reports, not a test that never ends.
func (tm *nodeTeam) sync(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for r, s := range tm.streams {
		for {
			done, err := s.Done()
			require.NoError(t, err, "rank %d", r)
			if done {
				break
			}
			if time.Now().After(deadline) {
				tm.abort.Store(1 << 62)
				for _, s := range tm.streams {
					_ = s.Synchronize()
				}
				t.Fatalf("rank %d's kernel of epoch %d still running after %v: aborted", r, tm.epoch, timeout)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// node.cu's layout constants are devsync's.
func TestNodeLayoutMatchesDevsync(t *testing.T) {
	src, err := os.ReadFile("kernels/node.cu")
	require.NoError(t, err)
	for name, v := range map[string]int{"MAX_RANKS": devsync.MaxRanks, "MAX_BLOCKS": devsync.MaxBlocks, "MAX_PHASES": devsync.MaxPhases} {
		require.Contains(t, string(src), fmt.Sprintf("#define GORING_NODE_%s %d\n", name, v))
	}
	require.Equal(t, devsync.MaxRanks, NodeMaxRanks, "shim.h GC_NODE_MAX_RANKS")
	for name, v := range map[string]int{"FIELDS": devsync.RingFields, "STOP": devsync.RingStop,
		"PARKED": devsync.RingParked, "FINAL": devsync.RingFinal} {
		require.Contains(t, string(src), fmt.Sprintf("#define GORING_RING_%s %d", name, v))
	}
	require.Equal(t, 2*devsync.RingFields, devsync.RingStop, "the stop word follows the pairs")
	require.Contains(t, string(src), "#define GORING_LEAVE_MARK (1ull << 63)")
	require.Contains(t, string(src), "#define GORING_NODE_LL_BYTES (2 << 20)")
	require.Equal(t, 2<<20, devsync.LLAreaBytes)
	require.Contains(t, string(src), "(unsigned)(epoch % 0xffffffffull) + 1", "devsync.LLTag")
	require.Equal(t, 0xffffffff, devsync.LLTagPeriod)
	require.Equal(t, uint64(1)<<63, devsync.LeaveMark)
}
