package exec_test

import (
	"errors"
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/stretchr/testify/require"
)

func src(off int64) sched.Ref     { return sched.Ref{Buf: sched.BufSrc, Off: off} }
func dst(off int64) sched.Ref     { return sched.Ref{Buf: sched.BufDst, Off: off} }
func scratch(off int64) sched.Ref { return sched.Ref{Buf: sched.BufScratch, Off: off} }

func bufs(srcN, dstN, scratchN int) exec.Buffers {
	b := exec.HostBuffers(make([]byte, srcN), make([]byte, dstN), nil)
	if scratchN > 0 {
		b.Scratch = exec.HostRegion(make([]byte, scratchN))
	}
	return b
}

// The machine's state transitions without any transport: what Start
// queues, what each completion releases, and the rule that posts of one
// (peer, tag) leave in step id order even when a later one is ready first.
func TestMachineTransitions(t *testing.T) {
	p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: 8, Dst: 16}}
	c0 := p.Copy(src(0), dst(0), 8)                 // 0: local, runs at Start
	s1 := p.Send(1, 5, dst(0), 8, sched.Path{}, c0) // 1: after the copy
	r2 := p.Recv(1, 5, dst(8), 8)                   // 2: no deps
	s3 := p.Send(1, 5, src(0), 4, sched.Path{})     // 3: no deps, but same (send, 1, 5) as step 1
	s4 := p.Send(1, 6, dst(8), 8, sched.Path{}, r2)
	_ = s3
	b := bufs(8, 16, 0)
	copy(b.Src.Bytes(), "abcdefgh")
	m, err := exec.New(p, b, exec.Config{Collective: coll.Allgather, Algorithm: "hand", NRanks: 2})
	require.NoError(t, err)
	require.NoError(t, m.Start())
	r := m.Ready()
	// The copy ran inside Start, so step 1 is ready, and step 3 follows it
	// in the same batch (it was held back only by step 1's post).
	require.Equal(t, "abcdefgh", string(b.Dst.Bytes()[:8]))
	require.Len(t, r.Recvs, 1)
	require.Equal(t, r2, r.Recvs[0].Step)
	require.Len(t, r.Sends, 2)
	require.Equal(t, []int{s1, s3}, []int{r.Sends[0].Step, r.Sends[1].Step})
	require.Equal(t, uint32(5), r.Sends[0].Tag)
	require.Equal(t, 1, r.Sends[0].Peer)
	require.Equal(t, 4, len(r.Sends[1].Buf.Bytes()))
	require.Equal(t, 3, m.InFlight())

	require.NoError(t, m.Step(exec.Completion{Token: m.Token(s1)}))
	require.True(t, m.Ready().Empty())
	copy(b.Dst.Bytes()[8:], "ijklmnop")
	require.NoError(t, m.Step(exec.Completion{Token: m.Token(r2), Len: 8}))
	r = m.Ready()
	require.Len(t, r.Sends, 1)
	require.Equal(t, s4, r.Sends[0].Step)
	require.Equal(t, "ijklmnop", string(r.Sends[0].Buf.Bytes()))
	require.False(t, m.Done())
	require.NoError(t, m.Step(exec.Completion{Token: m.Token(s3)}))
	require.NoError(t, m.Step(exec.Completion{Token: m.Token(s4)}))
	require.True(t, m.Done())

	// A second call: completions of the first are stale and ignored.
	staleToken := m.Token(s1)
	require.NoError(t, m.Start())
	require.NoError(t, m.Step(exec.Completion{Token: staleToken}))
	require.False(t, m.Done())
	require.Len(t, m.Ready().Sends, 2)
}

func TestMachineStepErrors(t *testing.T) {
	build := func() (*exec.Machine, int, int) {
		p := &sched.RankProgram{Rank: 1, Sizes: sched.Sizes{Src: 8, Dst: 8}}
		s := p.Send(0, 1, src(0), 8, sched.Path{})
		r := p.Recv(0, 1, dst(0), 8)
		m, err := exec.New(p, bufs(8, 8, 0), exec.Config{Collective: coll.Bcast, Algorithm: "x", NRanks: 2})
		require.NoError(t, err)
		require.NoError(t, m.Start())
		m.Ready()
		return m, s, r
	}
	boom := errors.New("boom")
	cases := []struct {
		name string
		comp func(m *exec.Machine, s, r int) exec.Completion
		want []string
	}{
		{"transport error", func(m *exec.Machine, s, r int) exec.Completion {
			return exec.Completion{Token: m.Token(s), Err: boom}
		}, []string{"rank 1 bcast/x", "step 0 (send to peer 0, tag 1, 8 bytes)", "boom"}},
		{"long message", func(m *exec.Machine, s, r int) exec.Completion {
			return exec.Completion{Token: m.Token(r), Len: 9}
		}, []string{"step 1 (recv from peer 0, tag 1, 8 bytes)", "received 9 bytes, posted 8"}},
		{"short message", func(m *exec.Machine, s, r int) exec.Completion {
			return exec.Completion{Token: m.Token(r), Len: 3}
		}, []string{"received 3 bytes, posted 8"}},
		{"unknown step", func(m *exec.Machine, s, r int) exec.Completion {
			return exec.Completion{Token: m.Token(7)}
		}, []string{"names no operation in flight"}},
	}
	for i, c := range cases {
		m, s, r := build()
		err := m.Step(c.comp(m, s, r))
		require.Error(t, err, "case %d %s", i, c.name)
		for _, w := range c.want {
			require.Contains(t, err.Error(), w, "case %d %s", i, c.name)
		}
		require.Equal(t, err, m.Err(), "case %d", i)
		require.Equal(t, err, m.Step(exec.Completion{Token: m.Token(s)}), "case %d: sticky", i)
	}
	// A completed step cannot complete twice.
	m, s, _ := build()
	require.NoError(t, m.Step(exec.Completion{Token: m.Token(s)}))
	require.ErrorContains(t, m.Step(exec.Completion{Token: m.Token(s)}), "no operation in flight")
	// The failure carries the cause for errors.Is.
	m, s, _ = build()
	require.ErrorIs(t, m.Step(exec.Completion{Token: m.Token(s), Err: boom}), boom)
}

func TestNewValidation(t *testing.T) {
	cfg := exec.Config{Collective: coll.Allreduce, Algorithm: "hand", NRanks: 4, Dtype: coll.Float32, Op: coll.Sum}
	cases := []struct {
		name  string
		build func(p *sched.RankProgram)
		cfg   func(c *exec.Config)
		want  string
	}{
		{"peer out of range", func(p *sched.RankProgram) { p.Send(4, 0, src(0), 4, sched.Path{}) }, nil, "peer 4 is not in [0, 4)"},
		{"negative peer", func(p *sched.RankProgram) { p.Recv(-1, 0, dst(0), 4) }, nil, "peer -1"},
		{"negative tag", func(p *sched.RankProgram) { p.Recv(1, -3, dst(0), 4) }, nil, "negative tag -3"},
		{"send past src", func(p *sched.RankProgram) { p.Send(1, 0, src(60), 8, sched.Path{}) }, nil, "reads src[60:68], outside the 64-byte src buffer"},
		{"recv past dst", func(p *sched.RankProgram) { p.Recv(1, 0, dst(0), 65) }, nil, "writes dst[0:65], outside the 64-byte dst buffer"},
		{"negative offset", func(p *sched.RankProgram) { p.Recv(1, 0, dst(-4), 4) }, nil, "dst[-4:0]"},
		{"negative length", func(p *sched.RankProgram) { p.Recv(1, 0, dst(0), -1) }, nil, "negative length -1"},
		{"scratch past end", func(p *sched.RankProgram) { p.Copy(src(0), scratch(30), 4) }, nil, "outside the 32-byte scratch buffer"},
		{"writes src", func(p *sched.RankProgram) { p.Recv(1, 0, src(0), 4) }, nil, "writes the src buffer"},
		{"unknown buffer", func(p *sched.RankProgram) { p.Copy(sched.Ref{Buf: 9}, dst(0), 4) }, nil, "unknown buffer"},
		{"unknown op", func(p *sched.RankProgram) { p.Add(sched.Step{Op: 9}) }, nil, "unknown op"},
		{"partial element", func(p *sched.RankProgram) { p.Reduce(src(0), dst(0), 6) }, nil, "not a whole number of float32"},
		{"misaligned offset", func(p *sched.RankProgram) { p.Reduce(src(2), dst(0), 8) }, nil, "not multiples"},
		{"bitwise float", func(p *sched.RankProgram) { p.Reduce(src(0), dst(0), 8) }, func(c *exec.Config) { c.Op = coll.Bxor }, "bitwise"},
		{"no dtype", func(p *sched.RankProgram) { p.Reduce(src(0), dst(0), 8) }, func(c *exec.Config) { c.Dtype = coll.DtypeInvalid }, "invalid dtype"},
		{"rank outside job", func(p *sched.RankProgram) { p.Rank = 4 }, nil, "rank 4 is not in a job of 4 ranks"},
	}
	for i, c := range cases {
		p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: 64, Dst: 64, Scratch: 32}}
		c.build(p)
		cf := cfg
		if c.cfg != nil {
			c.cfg(&cf)
		}
		_, err := exec.New(p, bufs(64, 64, 0), cf)
		require.ErrorContains(t, err, c.want, "case %d %s", i, c.name)
	}
	// New allocates scratch from Sizes.Scratch; the caller's is used as given.
	p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: 8, Dst: 8, Scratch: 24}}
	p.Copy(src(0), scratch(16), 8)
	m, err := exec.New(p, bufs(8, 8, 0), cfg)
	require.NoError(t, err)
	require.Len(t, m.Buffers().Scratch.Bytes(), 24)
	own := make([]byte, 24)
	m, err = exec.New(p, exec.HostBuffers(make([]byte, 8), make([]byte, 8), own), cfg)
	require.NoError(t, err)
	require.Same(t, &own[0], &m.Buffers().Scratch.Bytes()[0])
	// SetBuffers validates like New.
	require.ErrorContains(t, m.SetBuffers(exec.HostBuffers(make([]byte, 4), make([]byte, 8), nil)), "outside the 4-byte src buffer")
	require.NoError(t, m.SetBuffers(exec.HostBuffers(make([]byte, 8), make([]byte, 8), nil)))
	require.Same(t, &own[0], &m.Buffers().Scratch.Bytes()[0])
}

// asyncLocal stands for a device executor: it starts copies and reductions
// and reports them done later.
type asyncLocal struct {
	started []exec.LocalOp
}

func (a *asyncLocal) Local(op *exec.LocalOp) (bool, error) {
	a.started = append(a.started, *op)
	return false, nil
}

func TestAsyncLocalExecutor(t *testing.T) {
	p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: 8, Dst: 8}}
	c := p.Copy(src(0), dst(0), 8)
	r := p.Reduce(src(0), dst(0), 8, c)
	s := p.Send(1, 0, dst(0), 8, sched.Path{}, r)
	a := &asyncLocal{}
	m, err := exec.New(p, bufs(8, 8, 0), exec.Config{Collective: coll.Allreduce, NRanks: 2, Dtype: coll.Int32, Op: coll.Max, Local: a})
	require.NoError(t, err)
	require.NoError(t, m.Start())
	require.True(t, m.Ready().Empty())
	require.Len(t, a.started, 1)
	require.Equal(t, sched.OpCopy, a.started[0].Kind)
	require.Equal(t, 1, m.InFlight())
	require.NoError(t, m.Step(exec.Completion{Token: a.started[0].Token}))
	require.Len(t, a.started, 2)
	require.Equal(t, sched.OpReduce, a.started[1].Kind)
	require.Equal(t, coll.Int32, a.started[1].Dtype)
	require.Equal(t, coll.Max, a.started[1].Op)
	require.Equal(t, r, a.started[1].Step)
	require.NoError(t, m.Step(exec.Completion{Token: a.started[1].Token}))
	rd := m.Ready()
	require.Len(t, rd.Sends, 1)
	require.Equal(t, s, rd.Sends[0].Step)
}

// A copy whose source is its destination (a bcast root's in place, its
// Src the same memory as its Dst) is not handed to the executor: it
// moves nothing, and a device copy between overlapping ranges is
// undefined; what depends on it starts at once.
func TestCopyOntoItselfIsNotRun(t *testing.T) {
	p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: 8, Dst: 8}}
	c := p.Copy(src(0), dst(0), 8)
	other := p.Copy(src(0), dst(4), 4, c) // same buffer, other place: runs
	p.Send(1, 0, dst(0), 8, sched.Path{}, other)
	one := exec.HostRegion(make([]byte, 8))
	a := &asyncLocal{}
	m, err := exec.New(p, exec.Buffers{Src: one, Dst: one}, exec.Config{Collective: coll.Bcast, NRanks: 2, Dtype: coll.Int32, Op: coll.Sum, Local: a})
	require.NoError(t, err)
	require.NoError(t, m.Start())
	require.Len(t, a.started, 1, "only the copy between two places ran")
	require.Equal(t, other, a.started[0].Step)
}
