package mpath

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goring-hpc/goring/model"
)

// Made-up paths for the random tests: a direct route, a path staged
// through another GPU, a path staged through host memory.
func randomPaths(r *rand.Rand) []model.Path {
	u := func(lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }
	return []model.Path{
		{Name: model.DirectName, Alpha1US: u(1, 10), Beta1GBps: u(50, 400)},
		{Name: model.GPUStagedName(2), Staged: true, Alpha1US: u(1, 5), Beta1GBps: u(50, 200),
			Alpha2US: u(1, 5), Beta2GBps: u(50, 200), EpsilonUS: u(1, 5)},
		{Name: model.HostName, Staged: true, Alpha1US: u(2, 15), Beta1GBps: u(10, 60),
			Alpha2US: u(2, 15), Beta2GBps: u(10, 60), EpsilonUS: u(3, 15)},
	}
}

// randomSplit is a split of an odd number of bytes over one to three of
// randomPaths, 1-64 chunks per staged path, and a staging limit that
// usually forces the staged paths to cycle their slots (0 now and then:
// no limit).
func randomSplit(r *rand.Rand, maxBytes int64) (model.Split, int64) {
	paths := randomPaths(r)
	n := r.Int64N(maxBytes) | 1
	var used []model.Path
	for len(used) == 0 {
		used = used[:0]
		mask := 1 + r.IntN(7)
		for i, p := range paths {
			if mask&(1<<i) != 0 {
				used = append(used, p)
			}
		}
	}
	// Cut [0, n) at len(used)-1 random points.
	cuts := []int64{0, n}
	for range len(used) - 1 {
		cuts = append(cuts, r.Int64N(n+1))
	}
	slices.Sort(cuts)
	s := model.Split{Bytes: n}
	var slot int64
	for i, p := range used {
		sh := model.Share{Path: p, Bytes: cuts[i+1] - cuts[i], Chunks: 1}
		if p.Staged {
			sh.Chunks = 1 + r.IntN(64)
			slot = max(slot, (sh.Bytes+int64(sh.Chunks)-1)/int64(sh.Chunks))
		}
		s.Paths = append(s.Paths, sh)
	}
	if r.IntN(8) == 0 {
		return s, 0
	}
	return s, max(slot, 1) * int64(1+r.IntN(3))
}

// TestBuildRandomSplits checks the plan's shape: each path's bytes are
// covered once, in chunks differing by at most a byte; chunk c sits in
// slot c mod Slots; first hops on 1+2j, second hops on 2+2j after their
// first hop; a slot is refilled only after its previous chunk's second
// hop; staging within the limit; Waited marks exactly the waited ops.
func TestBuildRandomSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cycled := 0
	for it := 0; it < 500; it++ {
		split, maxStage := randomSplit(r, 1<<20)
		p, err := Build(split, maxStage)
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		covered := make([]int, p.Bytes)
		waited := make([]bool, len(p.Ops))
		staged := 0
		for pi, pp := range p.Paths {
			if pp.Path.Staged {
				if maxStage > 0 && pp.StageBytes() > maxStage {
					t.Fatalf("case %d path %d: %d bytes of staging over the %d limit", it, pi, pp.StageBytes(), maxStage)
				}
				if pp.Slots < pp.Chunks {
					cycled++
				}
			}
			var ops []int
			for i, op := range p.Ops {
				if op.Path == pi {
					ops = append(ops, i)
				}
			}
			if !pp.Path.Staged {
				op := p.Ops[ops[0]]
				if len(ops) != 1 || op.Stream != 0 || op.From != Src || op.To != Dst || op.FromOff != pp.Off || op.N != pp.Bytes || len(op.Waits) != 0 {
					t.Fatalf("case %d: direct path ops %+v", it, ops)
				}
				for b := pp.Off; b < pp.Off+pp.Bytes; b++ {
					covered[b]++
				}
				continue
			}
			in := 1 + 2*staged
			staged++
			if len(ops) != 2*pp.Chunks {
				t.Fatalf("case %d path %d: %d ops for %d chunks", it, pi, len(ops), pp.Chunks)
			}
			for c := 0; c < pp.Chunks; c++ {
				i0, i1 := ops[2*c], ops[2*c+1]
				f, s := p.Ops[i0], p.Ops[i1]
				slot := int64(c%pp.Slots) * pp.SlotBytes
				if f.Stream != in || f.Hop != 0 || f.From != Src || f.To != Stage || f.ToOff != slot ||
					s.Stream != in+1 || s.Hop != 1 || s.From != Stage || s.To != Dst || s.FromOff != slot ||
					f.N != s.N || f.FromOff != s.ToOff || f.N > pp.SlotBytes || f.N < pp.Bytes/int64(pp.Chunks) {
					t.Fatalf("case %d path %d chunk %d: ops %+v %+v", it, pi, c, f, s)
				}
				if !slices.Equal(s.Waits, []int{i0}) {
					t.Fatalf("case %d path %d chunk %d: second hop waits %v, want [%d]", it, pi, c, s.Waits, i0)
				}
				var want []int
				if c >= pp.Slots {
					want = []int{ops[2*(c-pp.Slots)+1]}
				}
				if !slices.Equal(f.Waits, want) {
					t.Fatalf("case %d path %d chunk %d: first hop waits %v, want %v", it, pi, c, f.Waits, want)
				}
				for b := f.FromOff; b < f.FromOff+f.N; b++ {
					covered[b]++
				}
			}
		}
		for i, op := range p.Ops {
			for _, w := range op.Waits {
				if w >= i || p.Ops[w].Stream == op.Stream {
					t.Fatalf("case %d: op %d waits for op %d", it, i, w)
				}
				waited[w] = true
			}
		}
		if !slices.Equal(waited, p.Waited) {
			t.Fatalf("case %d: Waited %v, want %v", it, p.Waited, waited)
		}
		if p.Streams != 1+2*staged {
			t.Fatalf("case %d: %d streams for %d staged paths", it, p.Streams, staged)
		}
		for b, k := range covered {
			if k != 1 {
				t.Fatalf("case %d: byte %d carried %d times", it, b, k)
			}
		}
	}
	if cycled < 100 {
		t.Fatalf("only %d staged paths cycled their slots", cycled)
	}
}

func TestBuildRejects(t *testing.T) {
	host := model.Path{Name: model.HostName, Staged: true, Alpha1US: 1, Beta1GBps: 10, Alpha2US: 1, Beta2GBps: 10}
	direct := model.Path{Name: model.DirectName, Alpha1US: 1, Beta1GBps: 100}
	if _, err := Build(model.Split{}, 0); err == nil {
		t.Error("an empty transfer built")
	}
	if _, err := Build(model.Split{Bytes: 10, Paths: []model.Share{{Path: direct, Bytes: 9}}}, 0); err == nil {
		t.Error("a split carrying 9 of 10 bytes built")
	}
	if _, err := Build(model.Split{Bytes: 100, Paths: []model.Share{{Path: host, Bytes: 100, Chunks: 4}}}, 24); err == nil {
		t.Error("25-byte chunks built with 24 bytes of staging")
	}
}

func TestChunkRange(t *testing.T) {
	for _, tc := range []struct {
		n int64
		k int
	}{{10, 3}, {9, 3}, {1, 1}, {3, 5}, {1 << 20, 7}} {
		var next int64
		for c := 0; c < tc.k; c++ {
			lo, hi := chunkRange(tc.n, tc.k, c)
			if lo != next || hi-lo > (tc.n+int64(tc.k)-1)/int64(tc.k) || hi-lo < tc.n/int64(tc.k) {
				t.Fatalf("n=%d k=%d chunk %d: [%d,%d)", tc.n, tc.k, c, lo, hi)
			}
			next = hi
		}
		if next != tc.n {
			t.Fatalf("n=%d k=%d: chunks end at %d", tc.n, tc.k, next)
		}
	}
}
