package team

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/ucx"
)

// testTable lists every team's C side and keeps none: the tests run C
// calls through package cexec themselves, never through cpath.c.
type testTable struct{}

func (testTable) Register(uint64, *cexec.Team) bool { return true }
func (testTable) Unregister(uint64)                 {}

// newTestTeams builds n connected teams in this process, each with its own
// worker, exchanging cards as the shim would (padded to a common slot).
func newTestTeams(t *testing.T, n int, opts string) []*Team {
	t.Helper()
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
	ctx, err := NewContext(opts, testTable{})
	require.NoError(t, err)
	teams := make([]*Team, n)
	slot := 0
	for r := range teams {
		teams[r], err = NewTeam(ctx, r, n)
		require.NoError(t, err)
		slot = max(slot, len(teams[r].card)+3) // +3: padding must be ignored
	}
	cards := make([]byte, n*slot)
	for r, tm := range teams {
		copy(cards[r*slot:], tm.card)
	}
	for r, tm := range teams {
		require.NoError(t, tm.Connect(cards, slot), "rank %d", r)
	}
	t.Cleanup(func() {
		for _, tm := range teams {
			assert.NoError(t, tm.Destroy())
		}
		assert.NoError(t, ctx.Close())
	})
	return teams
}

// cbuf is C memory for a test buffer (UCX keeps pointers to it while an
// operation is in flight, which Go memory must not be used for).
func cbuf(t *testing.T, n int) []byte {
	b := ucx.Alloc(max(n, 1))[:n]
	t.Cleanup(func() { _ = ucx.Free(b[:cap(b)]) })
	return b
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// runAll posts one collective per rank and polls them round-robin from
// this goroutine, as UCC's progress engine does, until all complete.
func runAll(t *testing.T, teams []*Team, args []Args) []string {
	t.Helper()
	return runColls(t, len(teams), func(r int) (*Coll, error) { return NewColl(teams[r], args[r]) })
}

// runColls makes each rank's call (made(r)), posts it, polls them all
// round-robin until all complete, and finalises them; it returns what
// ran on each rank (a call that fell back to messages says so).
func runColls(t *testing.T, n int, made func(r int) (*Coll, error)) []string {
	t.Helper()
	colls := make([]*Coll, n)
	for r := range colls {
		c, err := made(r)
		require.NoError(t, err, "rank %d", r)
		colls[r] = c
		require.NoError(t, c.Post())
	}
	pollAll(t, colls)
	algs := make([]string, n)
	for r, c := range colls {
		algs[r] = c.Algorithm()
		c.Finalize()
	}
	return algs
}

// pollAll polls every rank's posted call round-robin until all are done.
func pollAll(t *testing.T, colls []*Coll) {
	t.Helper()
	for polls, left := 0, len(colls); left > 0; polls++ {
		require.Less(t, polls, 5_000_000, "no progress")
		left = 0
		for r, c := range colls {
			done, err := c.Test()
			require.NoError(t, err, "rank %d", r)
			if !done {
				left++
			}
		}
	}
}

func f32s(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4) }

// Every collective the team layer runs, with and without in place, over
// real UCX workers, contents checked.
func TestTeamCollectives(t *testing.T) {
	teamCollectives(t, "", []int{1, 3, 1000, 65537})
}

// teamCollectives runs every collective of the team layer on teams made
// with opts at each count, contents checked.
func teamCollectives(t *testing.T, opts string, counts []int) {
	const n = 4
	teams := newTestTeams(t, n, opts)
	for i, count := range counts {
		B := 4 * count
		// allgather, then in place
		for _, inPlace := range []bool{false, true} {
			args := make([]Args, n)
			dsts := make([][]byte, n)
			for r := range args {
				src := cbuf(t, B)
				dsts[r] = cbuf(t, n*B)
				for k := range src {
					src[k] = byte(r*31 + k)
				}
				a := Args{Coll: coll.Allgather, Src: ptr(src), Dst: ptr(dsts[r]), Count: uint64(count), Dtype: coll.Float32}
				if inPlace {
					copy(dsts[r][r*B:], src)
					a.Src, a.InPlace = nil, true
				}
				args[r] = a
			}
			runAll(t, teams, args)
			for r := range dsts {
				for q := 0; q < n; q++ {
					for k := 0; k < B; k++ {
						require.Equal(t, byte(q*31+k), dsts[r][q*B+k], "case %d in_place=%v rank %d block %d byte %d", i, inPlace, r, q, k)
					}
				}
			}
		}
		// allreduce float32 sum, then in place
		for _, inPlace := range []bool{false, true} {
			args := make([]Args, n)
			dsts := make([][]byte, n)
			for r := range args {
				src := cbuf(t, B)
				dsts[r] = cbuf(t, B)
				vals := f32s(src)
				for k := range vals {
					vals[k] = float32(r + k%7)
				}
				a := Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dsts[r]), Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum}
				if inPlace {
					copy(dsts[r], src)
					a.Src, a.InPlace = nil, true
				}
				args[r] = a
			}
			runAll(t, teams, args)
			for r := range dsts {
				for k, v := range f32s(dsts[r]) {
					require.Equal(t, float32(n*(n-1)/2+n*(k%7)), v, "case %d in_place=%v rank %d elem %d", i, inPlace, r, k)
				}
			}
		}
		// reduce_scatter int64 max: count is each rank's output block; in
		// place, dst holds the whole input and the result lands in the
		// rank's block of it, the other blocks untouched
		for _, inPlace := range []bool{false, true} {
			args := make([]Args, n)
			dsts := make([][]byte, n)
			for r := range args {
				src := cbuf(t, n*8*count)
				for k := 0; k < n*count; k++ {
					binary.LittleEndian.PutUint64(src[8*k:], uint64(int64(r*1000-k)))
				}
				dsts[r] = cbuf(t, 8*count)
				args[r] = Args{Coll: coll.ReduceScatter, Src: ptr(src), Dst: ptr(dsts[r]), Count: uint64(count), Dtype: coll.Int64, Op: coll.Max}
				if inPlace {
					dsts[r] = src
					args[r].Src, args[r].Dst, args[r].InPlace = nil, ptr(src), true
				}
			}
			runAll(t, teams, args)
			for r := range dsts {
				out := dsts[r]
				if inPlace {
					out = dsts[r][8*r*count:]
					for k := 0; k < n*count; k++ {
						if k/count != r {
							require.Equal(t, int64(r*1000-k), int64(binary.LittleEndian.Uint64(dsts[r][8*k:])), "case %d in place rank %d input elem %d", i, r, k)
						}
					}
				}
				for k := 0; k < count; k++ {
					want := int64((n-1)*1000 - (r*count + k))
					require.Equal(t, want, int64(binary.LittleEndian.Uint64(out[8*k:])), "case %d in_place=%v rank %d elem %d", i, inPlace, r, k)
				}
			}
		}
		// bcast from the last rank: one buffer
		{
			args := make([]Args, n)
			bufs := make([][]byte, n)
			for r := range args {
				bufs[r] = cbuf(t, B)
				if r == n-1 {
					for k := range bufs[r] {
						bufs[r][k] = byte(k * 3)
					}
				}
				args[r] = Args{Coll: coll.Bcast, Src: ptr(bufs[r]), Dst: ptr(bufs[r]), Count: uint64(B), Dtype: coll.Uint8, Root: n - 1}
			}
			runAll(t, teams, args)
			for r := range bufs {
				for k := range bufs[r] {
					require.Equal(t, byte(k*3), bufs[r][k], "case %d rank %d byte %d", i, r, k)
				}
			}
		}
	}
}

// Collectives posted back to back run one at a time in post order, each
// completing with its own contents.
func TestTeamQueuesCollectives(t *testing.T) {
	const n, calls, count = 3, 5, 4099
	teams := newTestTeams(t, n, "alg_allreduce=ring")
	colls := make([][]*Coll, n)
	dsts := make([][][]byte, n)
	for r, tm := range teams {
		for k := 0; k < calls; k++ {
			src, dst := cbuf(t, 4*count), cbuf(t, 4*count)
			for e := range f32s(src) {
				f32s(src)[e] = float32(k*10 + r)
			}
			c, err := NewColl(tm, Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: count, Dtype: coll.Float32, Op: coll.Sum})
			require.NoError(t, err)
			assert.Equal(t, "ring", c.alg)
			require.NoError(t, c.Post())
			colls[r] = append(colls[r], c)
			dsts[r] = append(dsts[r], dst)
		}
	}
	for polls, left := 0, 1; left > 0; polls++ {
		require.Less(t, polls, 5_000_000)
		left = 0
		for r := range colls {
			for _, c := range colls[r] {
				done, err := c.Test()
				require.NoError(t, err)
				if !done {
					left++
				}
			}
		}
	}
	for r := range dsts {
		for k, dst := range dsts[r] {
			for e, v := range f32s(dst) {
				require.Equal(t, float32(n*k*10+n*(n-1)/2), v, "rank %d call %d elem %d", r, k, e)
			}
			colls[r][k].Finalize()
		}
	}
}

// hostAsDevice is the status of a host buffer passed as CUDA memory: with
// a driver, the caller's error (the driver says host memory); without
// one, a case for another layer (no CUDA in this process at all).
func hostAsDevice() Status {
	if _, err := cuda.DeviceCount(); cuda.IsNoDriver(err) {
		return StatusNotSupported
	}
	return StatusInvalid
}

func TestCollNotSupportedAndInvalid(t *testing.T) {
	teams := newTestTeams(t, 2, "")
	buf := cbuf(t, 64)
	cases := []struct {
		a    Args
		want Status
	}{
		{Args{Coll: coll.Allgather, Src: ptr(buf), Dst: ptr(buf), Count: 4, Dtype: coll.Uint8, Mem: MemCUDA}, hostAsDevice()},
		{Args{Coll: coll.Alltoallv, Src: ptr(buf), Dst: ptr(buf), Count: 4, Dtype: coll.Uint8}, StatusInvalid}, // no counts
		{Args{Coll: coll.Alltoallv, Src: ptr(buf), Dst: ptr(buf), Dtype: coll.Uint8, A2A: UniformA2A(1, 2), Mem: MemCUDA}, hostAsDevice()},
		{Args{Coll: coll.Alltoallv, Dst: ptr(buf), Dtype: coll.Uint8, InPlace: true, A2A: UniformA2A(1, 2)}, StatusNotSupported},
		{Args{Coll: coll.Alltoallv, Src: ptr(buf), Dst: ptr(buf), Dtype: coll.Uint8, A2A: &A2AArgs{SendCounts: []uint64{1, 1}, RecvCounts: []uint64{2, 1}}}, StatusInvalid}, // self 1 vs 2
		{Args{Coll: coll.Alltoallv, Src: ptr(buf), Dst: ptr(buf), Dtype: coll.Uint8, A2A: &A2AArgs{SendCounts: []uint64{1}, RecvCounts: []uint64{1, 1}}}, StatusInvalid},
		{Args{Coll: coll.Alltoallv, Src: ptr(buf), Dst: ptr(buf), Dtype: coll.Float64, A2A: UniformA2A(math.MaxUint64/4, 2)}, StatusInvalid},
		{Args{Coll: coll.Alltoallv, Src: ptr(buf), Dst: ptr(buf), Dtype: coll.Uint8, A2A: &A2AArgs{SendCounts: []uint64{2, 2}, RecvCounts: []uint64{2, 2},
			RecvDispls: []uint64{0, 1}}}, StatusInvalid}, // receive blocks overlap
		{Args{Coll: coll.Allreduce, Src: ptr(buf), Dst: ptr(buf), Count: 4, Dtype: coll.Float32, Op: coll.Band}, StatusNotSupported},
		{Args{Coll: coll.Allgather, Src: ptr(buf), Dst: ptr(buf), Count: 4, Dtype: coll.Uint8, Alg: "tree"}, StatusInvalid},
		{Args{Coll: coll.Allgather, Src: ptr(buf), Count: 4, Dtype: coll.Uint8}, StatusInvalid},
		{Args{Coll: coll.Bcast, Src: ptr(buf), Dst: ptr(buf), Count: 4, Dtype: coll.Uint8, Root: 2}, StatusInvalid},
		{Args{Coll: coll.Allgather, Src: ptr(buf), Dst: ptr(buf), Count: math.MaxUint64 / 2, Dtype: coll.Uint8}, StatusInvalid},
		{Args{Coll: coll.Allgather, Src: ptr(buf), Dst: ptr(buf), Count: 4}, StatusInvalid},
	}
	for i, c := range cases {
		_, err := NewColl(teams[0], c.a)
		require.Error(t, err, "case %d", i)
		assert.Equal(t, c.want, StatusOf(err), "case %d: %v", i, err)
	}
	// Zero elements: done at post, nothing on the wire.
	c, err := NewColl(teams[0], Args{Coll: coll.Allgather, Src: ptr(buf), Dst: ptr(buf), Count: 0, Dtype: coll.Uint8})
	require.NoError(t, err)
	require.NoError(t, c.Post())
	done, err := c.Test()
	assert.True(t, done)
	assert.NoError(t, err)
	c.Finalize()
}

func TestOptions(t *testing.T) {
	o, err := parseOptions("tls=self,sm; alg_allreduce=ring;timeout_ms=2500;alg_allgather=auto;")
	require.NoError(t, err)
	assert.Equal(t, "self,sm", o.tls)
	assert.Equal(t, "ring", o.algs[coll.Allreduce])
	assert.Equal(t, "auto", o.algs[coll.Allgather])
	assert.Equal(t, choose.Base(coll.Bcast), o.algs[coll.Bcast])
	assert.False(t, o.chosen[coll.Allgather], "auto is what naming nothing means")
	assert.EqualValues(t, 2500e6, o.timeout)
	assert.Equal(t, "pairwise", o.algs[coll.Alltoallv], "alltoallv's default plans from a rank's own counts")
	o, err = parseOptions("alg_alltoallv=nimble")
	require.NoError(t, err)
	assert.Equal(t, "nimble", o.algs[coll.Alltoallv])
	o, err = parseOptions("timeout_ms=inf")
	require.NoError(t, err)
	assert.Zero(t, o.timeout, "inf: no deadline")
	o, err = parseOptions("")
	require.NoError(t, err)
	assert.Zero(t, o.timeout, "no deadline by default: MPI lets a rank be late")
	assert.False(t, o.noIPC, "goring's CUDA IPC is on by default")
	o, err = parseOptions("ipc=n")
	require.NoError(t, err)
	assert.True(t, o.noIPC)
	for i, bad := range []string{"ipc=maybe", "nope=1", "alg_allreduce=tree", "alg_alltoallv=ring", "alg_alltoall=pairwise", "alg_gather=ring", "timeout_ms=0", "timeout_ms=x", "timeout_ms=-5", "timeout_ms=99999999999999999", "justakey"} {
		_, err := parseOptions(bad)
		assert.Error(t, err, "case %d: %s", i, bad)
	}
}

func TestCards(t *testing.T) {
	want := card{host: "host-a", pid: 4242, start: 1 << 40, addr: []byte{1, 2, 3}, gpu: "0000:19:00.0", cross: crossCard{mode: crossCardAuto, threads: 4}}
	c := encodeCard(want)
	got, err := decodeCard(append(c, 0, 0, 0))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	for i := 0; i < len(c); i++ {
		_, err := decodeCard(c[:i])
		assert.Error(t, err, "truncated to %d bytes", i)
	}
	// A rank of several lanes says how many after the rest; one lane
	// adds nothing, as before lanes.
	want.lanes = 5
	got, err = decodeCard(append(encodeCard(want), 0, 0))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	want.lanes = 1
	assert.Equal(t, c, encodeCard(want))
	bad := append([]byte{}, c...)
	binary.LittleEndian.PutUint16(bad[4:], 60000)
	_, err = decodeCard(bad)
	assert.Error(t, err)
}

func FuzzDecodeCard(f *testing.F) {
	f.Add(encodeCard(card{host: "h", pid: 1, start: 2, addr: []byte{9}}))
	f.Add([]byte("GRC2"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCard(b)
		if err == nil {
			assert.LessOrEqual(t, len(c.host)+len(c.addr)+22, len(b))
		}
	})
}

func TestTeamTopology(t *testing.T) {
	cases := []struct {
		hosts         []string
		nodes, perGPU int
	}{
		{[]string{"a", "a", "b", "b"}, 2, 2},
		{[]string{"a", "a", "a"}, 1, 3},
		{[]string{"a", "b", "a", "b"}, 1, 4}, // not contiguous: flat
		{[]string{"a", "a", "a", "b"}, 1, 4}, // unequal: flat
	}
	for i, c := range cases {
		tp, err := teamTopology(c.hosts)
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, c.nodes, tp.NumNodes(), "case %d", i)
		assert.Equal(t, c.nodes*c.perGPU, tp.NumGPUs(), "case %d", i)
	}
}

// A finished call's executor serves the next call of the same shape on new
// buffers (the pool in planCache), and the results follow the new buffers.
func TestTeamReusesExecutors(t *testing.T) {
	const n, count = 3, 5000
	teams := newTestTeams(t, n, "")
	for round := 0; round < 3; round++ {
		args := make([]Args, n)
		dsts := make([][]byte, n)
		for r := range args {
			src := cbuf(t, 4*count)
			dsts[r] = cbuf(t, 4*count)
			for k := range f32s(src) {
				f32s(src)[k] = float32(round*100 + r)
			}
			args[r] = Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dsts[r]), Count: count, Dtype: coll.Float32, Op: coll.Sum}
		}
		runAll(t, teams, args)
		for r := range dsts {
			for k, v := range f32s(dsts[r]) {
				require.Equal(t, float32(n*round*100+n*(n-1)/2), v, "round %d rank %d elem %d", round, r, k)
			}
		}
		for r, tm := range teams {
			require.Len(t, tm.plans.plans, 1, "rank %d: one shape, one plan", r)
			for _, e := range tm.plans.plans {
				assert.Len(t, e.idle, 1, "round %d rank %d: the executor is back in the pool, and only one was ever built", round, r)
			}
		}
	}
}
