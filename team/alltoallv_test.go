package team

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
)

// a2aCase is one alltoallv of a team: counts[i][j] elements from rank i
// to rank j, packed or at reversed, gapped displacements.
type a2aCase struct {
	alg    string
	counts [][]uint64
	packed bool
	// uniform: an alltoall (counts all the same, packed), as the C API
	// hands it over.
	uniform bool
}

// runA2A runs c on teams with 2-byte elements (each element names its
// source, destination and index) and checks every rank's dst, the gaps
// included. It returns the algorithm each rank ran.
func runA2A(t *testing.T, teams []*Team, c a2aCase) []string {
	t.Helper()
	n := len(teams)
	const esize = 2
	layout := func(len func(j int) uint64) ([]uint64, uint64) {
		at := make([]uint64, n)
		off := uint64(3)
		for j := n - 1; j >= 0; j-- {
			at[j] = off
			off += len(j) + 1
		}
		return at, off
	}
	args := make([]Args, n)
	dsts := make([][]byte, n)
	want := make([][]byte, n)
	for r := range n {
		v := &A2AArgs{SendCounts: make([]uint64, n), RecvCounts: make([]uint64, n)}
		for j := range n {
			v.SendCounts[j], v.RecvCounts[j] = c.counts[r][j], c.counts[j][r]
		}
		if c.uniform {
			v = UniformA2A(c.counts[0][0], n)
		}
		var srcLen, dstLen uint64
		if c.packed {
			for j := range n {
				srcLen += v.SendCounts[j]
				dstLen += v.RecvCounts[j]
			}
		} else {
			v.SendDispls, srcLen = layout(func(j int) uint64 { return v.SendCounts[j] })
			v.RecvDispls, dstLen = layout(func(i int) uint64 { return v.RecvCounts[i] })
		}
		src := cbuf(t, int(srcLen)*esize)
		dsts[r] = cbuf(t, int(dstLen)*esize)
		want[r] = make([]byte, len(dsts[r]))
		for k := range dsts[r] {
			dsts[r][k], want[r][k] = 0xEE, 0xEE
		}
		var sendAt uint64
		for j := range n {
			if v.SendDispls != nil {
				sendAt = v.SendDispls[j]
			}
			for e := range v.SendCounts[j] {
				x := a2aElem(r, j, e)
				src[(sendAt+e)*esize], src[(sendAt+e)*esize+1] = byte(x), byte(x>>8)
			}
			sendAt += v.SendCounts[j]
		}
		args[r] = Args{Coll: coll.Alltoallv, Src: ptr(src), Dst: ptr(dsts[r]), Dtype: coll.Int16, Alg: c.alg, A2A: v}
	}
	for r := range n { // what rank r receives from each i, where it asked
		var recvAt uint64
		v := args[r].A2A
		for i := range n {
			if v.RecvDispls != nil {
				recvAt = v.RecvDispls[i]
			}
			for e := range v.RecvCounts[i] {
				x := a2aElem(i, r, e)
				want[r][(recvAt+e)*esize], want[r][(recvAt+e)*esize+1] = byte(x), byte(x>>8)
			}
			recvAt += v.RecvCounts[i]
		}
	}
	algs := runAll(t, teams, args)
	for r := range n {
		require.Equal(t, want[r], dsts[r], "%s packed=%v rank %d", c.alg, c.packed, r)
	}
	return algs
}

// a2aElem is element e of the block rank from sends rank to. The index's
// bits above 16 weigh in too: without them elements 65536 apart were
// equal, and NIMBLE's relayed chunks of 4 MiB (32 × 65536 two-byte
// elements) could land at each other's offsets unseen.
func a2aElem(from, to int, e uint64) uint16 {
	return uint16(from*7919 + to*131 + int(e) + int(e>>16)*29 + int(e>>32)*37)
}

// randomA2A is an n-rank count matrix of up to max elements per pair, a
// third of them zero, and one rank that sends nothing at all.
func randomA2A(rng *rand.Rand, n int, max uint64) [][]uint64 {
	m := make([][]uint64, n)
	silent := rng.IntN(n)
	for i := range m {
		m[i] = make([]uint64, n)
		for j := range m[i] {
			if i != silent && rng.IntN(3) != 0 {
				m[i][j] = rng.Uint64N(max + 1)
			}
		}
	}
	return m
}

// Alltoallv through the team layer, pairwise and NIMBLE, packed and at the
// caller's displacements, odd counts with zeros, contents checked byte for
// byte; then alltoall (uniform counts) and an allreduce after them (the
// calls' tags stay in step whether or not the count exchange ran).
func TestTeamAlltoallv(t *testing.T) {
	const n = 4
	teams := newTestTeams(t, n, "")
	rng := rand.New(rand.NewPCG(5, 0))
	for _, alg := range []string{"", "pairwise", "nimble"} {
		for _, max := range []uint64{1, 7, 1001} {
			for _, packed := range []bool{true, false} {
				algs := runA2A(t, teams, a2aCase{alg: alg, counts: randomA2A(rng, n, max), packed: packed})
				want := alg
				if alg == "" {
					want = "pairwise"
				}
				require.Equal(t, want, algs[0])
			}
		}
	}
	// NIMBLE splits a skewed demand of 1 MiB and more over relays.
	big := make([][]uint64, n)
	for i := range big {
		big[i] = make([]uint64, n)
		for j := range big[i] {
			big[i][j] = uint64(100 + 3*i + j)
		}
	}
	big[0][1], big[1][2] = 3<<20+5, 0
	runA2A(t, teams, a2aCase{alg: "nimble", counts: big})
	runA2A(t, teams, a2aCase{alg: "nimble", counts: big, packed: true})
	relays := false
	for r, tm := range teams {
		for _, e := range tm.plans.plans {
			relays = relays || (e.plan.Algorithm == "nimble" && e.program(r).Sizes.Scratch > 0)
		}
	}
	require.True(t, relays, "no rank relayed: the NIMBLE case does not test relayed pieces")

	// alltoall: count elements to every peer, packed; nimble plans it
	// without the count exchange (every rank knows the matrix).
	for _, count := range []uint64{0, 1, 3, 1000, 1<<20 + 1} {
		all := make([][]uint64, n)
		for i := range all {
			all[i] = make([]uint64, n)
			for j := range all[i] {
				all[i][j] = count
			}
		}
		for _, alg := range []string{"", "nimble"} {
			runA2A(t, teams, a2aCase{alg: alg, counts: all, packed: true, uniform: true})
		}
	}
	buf := cbuf(t, 4*n)
	c, err := NewColl(teams[0], Args{Coll: coll.Alltoallv, Src: ptr(buf), Dst: ptr(buf), Dtype: coll.Uint8, Alg: "nimble", A2A: UniformA2A(1, n)})
	require.NoError(t, err)
	r, oneMachine := c.run.(*machineRunner)
	require.True(t, oneMachine)
	require.Nil(t, r.xchg, "alltoall with nimble exchanged counts it knows")
	require.NotNil(t, r.m)
	c.Finalize()
	teamCollectivesAfter(t, teams)
}

// teamCollectivesAfter runs one allreduce on teams and checks it: calls
// after alltoallvs still pair up.
func teamCollectivesAfter(t *testing.T, teams []*Team) {
	n := len(teams)
	args := make([]Args, n)
	dsts := make([][]byte, n)
	for r := range args {
		src := cbuf(t, 4*5)
		in := f32s(src)
		for k := range in {
			in[k] = float32(r + k)
		}
		dsts[r] = cbuf(t, 4*5)
		args[r] = Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dsts[r]), Count: 5, Dtype: coll.Float32, Op: coll.Sum}
	}
	runAll(t, teams, args)
	for r := range dsts {
		for k, v := range f32s(dsts[r]) {
			require.Equal(t, float32(n*k+n*(n-1)/2), v, "rank %d elem %d", r, k)
		}
	}
}

// Counts that do not pair up (rank 0 sends rank 1 more than rank 1
// expects): with NIMBLE every rank sees the whole matrix after the
// exchange and every rank fails the call, none waits.
func TestTeamAlltoallvMismatchFailsEverywhere(t *testing.T) {
	const n = 3
	teams := newTestTeams(t, n, "")
	args := make([]Args, n)
	for r := range n {
		v := UniformA2A(2, n)
		v.Uniform = false // an alltoallv whose counts happen to be equal
		if r == 0 {
			v.SendCounts = []uint64{2, 3, 2}
		}
		src, dst := cbuf(t, 16), cbuf(t, 16)
		args[r] = Args{Coll: coll.Alltoallv, Src: ptr(src), Dst: ptr(dst), Dtype: coll.Uint8, Alg: "nimble", A2A: v}
	}
	colls := make([]*Coll, n)
	for r := range n {
		c, err := NewColl(teams[r], args[r])
		require.NoError(t, err)
		colls[r] = c
		require.NoError(t, c.Post())
	}
	errs := make([]error, n)
	for polls, left := 0, n; left > 0; polls++ {
		require.Less(t, polls, 5_000_000, "no progress")
		left = 0
		for r, c := range colls {
			if errs[r] != nil {
				continue
			}
			done, err := c.Test()
			require.False(t, done, "rank %d completed a call whose counts do not pair up", r)
			if errs[r] = err; err == nil {
				left++
			}
		}
	}
	for r, err := range errs {
		require.ErrorContains(t, err, "rank 0 sends rank 1 3 bytes, which expects 2", "rank %d", r)
		require.Equal(t, StatusInvalid, StatusOf(err), fmt.Sprint(err))
		colls[r].Finalize()
	}
}

// oneSidedRank is one rank's share of a one-sided alltoallv
// (UCC_COLL_ARGS_FLAG_MEM_MAPPED_BUFFERS) as cshim/tl_goring_coll.c hands
// it to goring: UCC's dst displacement j there is where this rank's block
// goes in rank j's dst, which no rank's own arguments say for its incoming
// blocks. So the shim posts two calls back to back, an alltoall of
// (bytes, offset) pairs and the alltoallv in bytes into a packed private
// buffer, and places each block at its sender's offset when both are done.
type oneSidedRank struct {
	pairs, got []byte // 2n uint64 each: sent (bytes, offset) pairs, received ones
	scratch    []byte // the blocks received, packed in rank order
	expect     []uint64
	xchg, data Args
	calls      []*Coll // the two calls once made, posted again each round
}

// newOneSidedRank builds rank r's two calls from its UCC arguments in
// elements of esize bytes: counts and displacements of src (nil: packed),
// its dst counts, and the peers' dst displacements.
func newOneSidedRank(t *testing.T, n int, esize uint64, src []byte, sendCounts, sendDispls, recvCounts, peerDispls []uint64, alg string) *oneSidedRank {
	o := &oneSidedRank{pairs: cbuf(t, 16*n), got: cbuf(t, 16*n), expect: make([]uint64, n)}
	v := &A2AArgs{SendCounts: make([]uint64, n), RecvCounts: o.expect}
	if sendDispls != nil {
		v.SendDispls = make([]uint64, n)
	}
	var total uint64
	for j := range n {
		v.SendCounts[j] = sendCounts[j] * esize
		if sendDispls != nil {
			v.SendDispls[j] = sendDispls[j] * esize
		}
		binary.LittleEndian.PutUint64(o.pairs[16*j:], v.SendCounts[j])
		binary.LittleEndian.PutUint64(o.pairs[16*j+8:], peerDispls[j]*esize)
		o.expect[j] = recvCounts[j] * esize
		total += o.expect[j]
	}
	o.scratch = cbuf(t, int(total))
	o.xchg = Args{Coll: coll.Alltoallv, Src: ptr(o.pairs), Dst: ptr(o.got), Count: 2, Dtype: coll.Uint64, A2A: UniformA2A(2, n)}
	o.data = Args{Coll: coll.Alltoallv, Src: ptr(src), Dst: ptr(o.scratch), Dtype: coll.Uint8, Alg: alg, A2A: v}
	return o
}

// place is the shim's last step: every sender's count checked against
// this rank's, then each block copied to dst at its sender's offset.
func (o *oneSidedRank) place(t *testing.T, dst []byte) {
	var at uint64
	for i, want := range o.expect {
		require.Equal(t, want, binary.LittleEndian.Uint64(o.got[16*i:]), "bytes from rank %d", i)
		off := binary.LittleEndian.Uint64(o.got[16*i+8:])
		copy(dst[off:off+want], o.scratch[at:at+want])
		at += want
	}
}

// One-sided alltoallv as the shim runs it, over real UCX workers: 16-byte
// elements (a complex double, which goring's own calls refuse), the
// receivers' blocks reversed and gapped, the senders' packed or gapped,
// pairwise and NIMBLE. Each rank posts its two calls back to back and an
// allreduce right behind them, so the test fails if another call could
// come between them, and posts the pair again (a persistent request) with
// new contents. dst must hold every block where its receiver asked and
// nothing in the gaps.
func TestTeamOneSidedAlltoallv(t *testing.T) {
	const n, esize = 4, 16
	teams := newTestTeams(t, n, "")
	rng := rand.New(rand.NewPCG(7, 0))
	gapped := func(len func(j int) uint64) ([]uint64, uint64) {
		at := make([]uint64, n)
		off := uint64(1)
		for j := n - 1; j >= 0; j-- {
			at[j] = off
			off += len(j) + 2
		}
		return at, off
	}
	elem := func(round, from, to int, e uint64) byte { return byte(round*101 + from*37 + to*11 + int(e)) }
	for _, alg := range []string{"", "nimble"} {
		for _, max := range []uint64{1, 9, 700} {
			for _, packedSrc := range []bool{true, false} {
				counts := randomA2A(rng, n, max)
				recvAt := make([][]uint64, n) // rank r's block from rank i: recvAt[r][i]
				dsts := make([][]byte, n)
				for r := range n {
					var dstLen uint64
					recvAt[r], dstLen = gapped(func(i int) uint64 { return counts[i][r] })
					dsts[r] = cbuf(t, int(dstLen*esize))
				}
				srcs := make([][]byte, n)
				sendAt := make([][]uint64, n)
				ranks := make([]*oneSidedRank, n)
				for r := range n {
					row, col, peer := counts[r], make([]uint64, n), make([]uint64, n)
					for j := range n {
						col[j], peer[j] = counts[j][r], recvAt[j][r]
					}
					var srcLen uint64
					if packedSrc {
						for _, c := range row {
							srcLen += c
						}
					} else {
						sendAt[r], srcLen = gapped(func(j int) uint64 { return row[j] })
					}
					srcs[r] = cbuf(t, int(srcLen*esize))
					ranks[r] = newOneSidedRank(t, n, esize, srcs[r], row, sendAt[r], col, peer, alg)
				}
				for round := range 2 {
					want := make([][]byte, n)
					for r := range n {
						var at uint64
						for j := range n {
							if sendAt[r] != nil {
								at = sendAt[r][j]
							}
							for e := range counts[r][j] * esize {
								srcs[r][at*esize+e] = elem(round, r, j, e)
							}
							at += counts[r][j]
						}
						want[r] = make([]byte, len(dsts[r]))
						for k := range dsts[r] {
							dsts[r][k], want[r][k] = 0xEE, 0xEE
						}
						for i := range n {
							for e := range counts[i][r] * esize {
								want[r][recvAt[r][i]*esize+e] = elem(round, i, r, e)
							}
						}
					}
					runOneSided(t, teams, ranks, round)
					for r := range n {
						ranks[r].place(t, dsts[r])
						require.Equal(t, want[r], dsts[r], "alg %q max %d packed src %v round %d rank %d", alg, max, packedSrc, round, r)
					}
				}
			}
		}
	}
}

// runOneSided posts every rank's two calls (made on the first round, posted
// again after, as UCC posts a persistent request) and an allreduce behind
// them, polls them all until done and checks the allreduce.
func runOneSided(t *testing.T, teams []*Team, ranks []*oneSidedRank, round int) {
	t.Helper()
	n := len(teams)
	var colls []*Coll
	sums := make([][]byte, n)
	for r, tm := range teams {
		src := cbuf(t, 4)
		f32s(src)[0] = float32(r + round)
		sums[r] = cbuf(t, 4)
		o := ranks[r]
		if o.calls == nil {
			for _, a := range []Args{o.xchg, o.data} {
				c, err := NewColl(tm, a)
				require.NoError(t, err, "rank %d", r)
				o.calls = append(o.calls, c)
				t.Cleanup(c.Finalize) // before the teams' own cleanup
			}
		}
		after, err := NewColl(tm, Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(sums[r]), Count: 1, Dtype: coll.Float32, Op: coll.Sum})
		require.NoError(t, err, "rank %d", r)
		for _, c := range []*Coll{o.calls[0], o.calls[1], after} {
			require.NoError(t, c.Post())
			colls = append(colls, c)
		}
		defer after.Finalize()
	}
	for polls, left := 0, 1; left > 0; polls++ {
		require.Less(t, polls, 5_000_000, "no progress")
		left = 0
		for _, c := range colls {
			done, err := c.Test()
			require.NoError(t, err)
			if !done {
				left++
			}
		}
	}
	for r := range n {
		require.Equal(t, float32(n*(n-1)/2+n*round), f32s(sums[r])[0], "allreduce after the pair, rank %d", r)
	}
}
