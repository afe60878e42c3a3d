package direct_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/exec/memtransport"
)

// An external test package: it checks the calls with goring bench's
// validation patterns, and bench imports the team layer, which imports
// this package.

// The leader algorithms (allgather, allreduce, reduce_scatter, bcast from
// rank 1) as this package runs them for four ranks on one (fake) device,
// called again and again on the same buffers and network as goring bench
// calls them, a barrier between calls: every call's output passes bench's
// validation pattern of its iteration, and rank 0 mapped the others'
// buffers (its engine opened mappings).
func TestCallsPassBenchPatterns(t *testing.T) {
	const n, iters = 4, 4
	for i, tc := range []struct {
		c     coll.Collective
		dtype coll.Dtype
		op    coll.Op
		sizes []int64
	}{
		{coll.Allgather, coll.Uint8, coll.OpInvalid, []int64{1, 65537}},
		{coll.Allreduce, coll.Float32, coll.Sum, []int64{4, 40004}},
		{coll.Allreduce, coll.Int16, coll.Max, []int64{2, 1026}},
		{coll.ReduceScatter, coll.Float32, coll.Sum, []int64{4, 40004}},
		{coll.Bcast, coll.Uint8, coll.OpInvalid, []int64{1, 3333}},
	} {
		arena := fakedev.New(uint64(10 + i))
		net := memtransport.New(n, memtransport.Options{Seed: uint64(i), Reorder: true, Memory: arena})
		engines := make([]*fakedev.Engine, n)
		for r := range engines {
			engines[r] = arena.Engine(r)
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, B := range tc.sizes {
					p := &bench.Pattern{Coll: tc.c, Dtype: tc.dtype, Op: tc.op, NRanks: n, Bytes: B, Root: 1}
					if errs[r] = callIterations(arena, engines[r], memT{net.Endpoint(r)}, p, r, iters); errs[r] != nil {
						net.Abort(errs[r])
						return
					}
				}
			}()
		}
		wg.Wait()
		for r, err := range errs {
			require.NoError(t, err, "case %d rank %d", i, r)
		}
		assert.Positive(t, engines[0].Mapped, "case %d: rank 0 mapped the others' buffers", i)
	}
}

// memT is the in-memory network as bench's barrier wants it.
type memT struct{ *memtransport.Endpoint }

func (memT) NextCall() {}

// callIterations runs rank r's share of iters calls of p's collective on
// buffers of the arena's device 0, each checked against p.
func callIterations(arena *fakedev.Arena, mapper direct.Mapper, tr memT, p *bench.Pattern, r, iters int) error {
	mem := fakedev.Memory{Arena: arena, Dev: 0}
	src, err := mem.Alloc(p.SrcBytes(r))
	if err != nil {
		return err
	}
	dst, err := mem.Alloc(p.DstBytes(r))
	if err != nil {
		return err
	}
	local, err := mem.NewLocal()
	if err != nil {
		return err
	}
	in, out := make([]byte, src.Len()), make([]byte, dst.Len())
	ctx := context.Background()
	for it := range iters {
		if p.Coll != coll.Bcast || r == p.Root {
			p.FillSrc(in, r, it)
			if err := mem.Write(src, in); err != nil {
				return err
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		var call direct.Call
		dtype, op := p.Coll.Reduction(p.Dtype, p.Op)
		cfg := direct.Config{Collective: p.Coll, Rank: r, Size: p.NRanks, Root: p.Root, Src: src, Dst: dst, Dtype: dtype, Op: op,
			Transport: tr, Device: &direct.Device{Mapper: mapper, Local: local}, Deadline: deadline}
		if err := call.Begin(cfg); err != nil {
			return err
		}
		if err := exec.Drive(ctx, &call, deadline); err != nil {
			return err
		}
		if err := mem.Read(out, dst); err != nil {
			return err
		}
		if err := p.Check(out, r, it); err != nil {
			return fmt.Errorf("%s %d bytes iteration %d: %w", p.Coll, p.Bytes, it, err)
		}
		if err := bench.Barrier(ctx, tr, r, p.NRanks, deadline); err != nil {
			return err
		}
	}
	return nil
}
