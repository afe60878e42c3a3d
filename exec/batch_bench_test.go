package exec_test

import (
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// benchDesc is what a device executor builds per batched step (cudaexec:
// cuda.CopyDesc).
type benchDesc struct {
	dst, src uintptr
	n        int
}

// benchLocal stands for cudaexec.Local on the host: a single step or a
// batch is "launched" (a batch's descriptors built as cudaexec builds
// them) and reported finished at the next Poll, one token a batch.
type benchLocal struct {
	descs   []benchDesc
	pending []uint64
	steps   int
}

func (b *benchLocal) Local(op *exec.LocalOp) (bool, error) {
	b.pending = append(b.pending, op.Token)
	b.steps++
	return false, nil
}

func (b *benchLocal) BatchesReduce() bool { return true }

// LocalBatch builds the descriptors as cudaexec.Local does: the
// buffers' addresses once, then per step two additions.
func (b *benchLocal) LocalBatch(bt *exec.Batch) (bool, error) {
	var base [4]uintptr
	for k := sched.BufSrc; k <= sched.BufScratch; k++ {
		base[k] = bt.Bufs.Of(k).Addr()
	}
	d := b.descs[:0]
	steps := bt.Prog.Steps
	for _, id := range bt.Steps {
		s := &steps[id]
		d = append(d, benchDesc{base[s.DstBuf&3] + uintptr(s.DstOff), base[s.SrcBuf&3] + uintptr(s.SrcOff), int(s.Len)})
	}
	b.descs = d
	b.steps += len(bt.Steps)
	b.pending = append(b.pending, bt.Token)
	return false, nil
}

// benchMachine builds rank 0's Machine for an MoE call of the shape
// docs/results.md profiles on two H200s: 2 ranks, 8192 tokens a rank of
// 8192 bytes, top-2 of 8 experts, expert 0 hot at 0.7. The buffers are
// fake device memory that nothing reads: only the host's work is timed.
func benchMachine(b testing.TB, c coll.Collective, l exec.LocalExecutor) *exec.Machine {
	return moeMachine(b, c, "unicast", moe.Options{NRanks: 2, TokensPerRank: 8192, TokenBytes: 8192, TopK: 2, Experts: 8, Hot: map[int]float64{0: 0.7}, Seed: 1}, l)
}

// moeMachine builds rank 0's Machine for the MoE call of o by alg, on
// fake device buffers (far apart, never read) and executor l.
func moeMachine(b testing.TB, c coll.Collective, alg string, o moe.Options, l exec.LocalExecutor) *exec.Machine {
	r, err := moe.Generate(o)
	if err != nil {
		b.Fatal(err)
	}
	d := coll.Uint8
	if c == coll.Combine {
		d = coll.Bfloat16
	}
	plan, err := sched.Generate(sched.Spec{Collective: c, Algorithm: alg, Topo: topo.SweepShape(1, o.NRanks), DtypeBytes: d.Size(), Routing: r})
	if err != nil {
		b.Fatal(err)
	}
	prog := &plan.Ranks[0]
	fake := exec.Mem{Kind: exec.MemFake}
	region := func(at uintptr, n int64) exec.Region { return exec.DeviceRegion(fake, at, n) }
	bufs := exec.Buffers{Src: region(1<<40, prog.Sizes.Src), Dst: region(2<<40, prog.Sizes.Dst), Scratch: region(3<<40, max(prog.Sizes.Scratch, 1))}
	cfg := exec.ConfigFor(plan, d, coll.Sum)
	cfg.Local = l
	m, err := exec.New(prog, bufs, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchCall runs one call: every send and receive completes as soon as
// it is posted (the peer's side is not simulated), device work at the
// next round.
func benchCall(b testing.TB, m *exec.Machine, l *benchLocal, comps []exec.Completion) []exec.Completion {
	if err := m.Start(); err != nil {
		b.Fatal(err)
	}
	for !m.Done() {
		comps = comps[:0]
		r := m.Ready()
		for _, p := range r.Recvs {
			comps = append(comps, exec.Completion{Token: p.Token, Len: p.Buf.Len()})
		}
		for _, p := range r.Sends {
			comps = append(comps, exec.Completion{Token: p.Token, Len: p.Buf.Len()})
		}
		for _, t := range l.pending {
			comps = append(comps, exec.Completion{Token: t})
		}
		l.pending = l.pending[:0]
		if len(comps) == 0 {
			b.Fatal("stuck")
		}
		for _, c := range comps {
			if err := m.Step(c); err != nil {
				b.Fatal(err)
			}
		}
	}
	return comps
}

// BenchmarkMoEBatches times the host's part of a batched MoE call on a
// device executor: the Machine's bookkeeping and the hand-off of its
// batches (docs/results.md, "Where the time goes now").
//
//	go test ./exec -run '^$' -bench MoEBatches -benchmem
func BenchmarkMoEBatches(b *testing.B) {
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		b.Run(string(c), func(b *testing.B) {
			l := &benchLocal{}
			m := benchMachine(b, c, l)
			comps := benchCall(b, m, l, nil)
			l.steps = 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				comps = benchCall(b, m, l, comps)
			}
			b.ReportMetric(float64(l.steps)/float64(b.N), "local-steps/op")
		})
	}
}
