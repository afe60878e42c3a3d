package mpath

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goring-hpc/goring/model"
)

// checkRun checks the timing rules of a simulated run of p: ops of one
// stream one after another, waits before starts, every cost charged, the
// totals the maxima of the op ends, and every path's first op at t=0.
func checkRun(t *testing.T, name string, p *Plan, res Result) {
	t.Helper()
	last := make([]int, p.Streams)
	for i := range last {
		last[i] = -1
	}
	first := make([]int, len(p.Paths))
	for i := range first {
		first[i] = -1
	}
	var total float64
	pathUS := make([]float64, len(p.Paths))
	for i, op := range p.Ops {
		ot := res.Ops[i]
		alpha, rate, eps := p.hop(op)
		if math.Abs(ot.DataUS-(ot.StartUS+eps+alpha)) > 1e-9*(1+ot.DataUS) || ot.EndUS < ot.DataUS+float64(op.N)/rate*(1-1e-9) {
			t.Fatalf("%s: op %d %+v: times %+v", name, i, op, ot)
		}
		if j := last[op.Stream]; j >= 0 && ot.StartUS < res.Ops[j].EndUS {
			t.Fatalf("%s: op %d starts at %g before op %d of its stream ends at %g", name, i, ot.StartUS, j, res.Ops[j].EndUS)
		}
		last[op.Stream] = i
		for _, w := range op.Waits {
			if ot.StartUS < res.Ops[w].EndUS {
				t.Fatalf("%s: op %d starts at %g before op %d it waits for ends at %g", name, i, ot.StartUS, w, res.Ops[w].EndUS)
			}
		}
		if first[op.Path] < 0 {
			first[op.Path] = i
			if ot.StartUS != 0 {
				t.Fatalf("%s: path %d's first op %d starts at %g", name, op.Path, i, ot.StartUS)
			}
		}
		total = max(total, ot.EndUS)
		pathUS[op.Path] = max(pathUS[op.Path], ot.EndUS)
	}
	if total != res.TotalUS || !slices.Equal(pathUS, res.PathUS) {
		t.Fatalf("%s: total %g, paths %v; ops say %g, %v", name, res.TotalUS, res.PathUS, total, pathUS)
	}
}

// (a) Random splits: the plan runs, the destination equals the source,
// every path starts at t=0, contention never makes it faster.
func TestSimulateRandomSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cycled := 0
	for it := 0; it < 400; it++ {
		split, maxStage := randomSplit(r, 4<<20)
		p, err := Build(split, maxStage)
		if err != nil {
			t.Fatalf("case %d: %v", it, err)
		}
		for _, pp := range p.Paths {
			if maxStage > 0 && pp.StageBytes() > maxStage {
				t.Fatalf("case %d: %d bytes of staging over the %d limit", it, pp.StageBytes(), maxStage)
			}
			if pp.Slots < pp.Chunks {
				cycled++
			}
		}
		free, err := Simulate(p, model.GammaContention{})
		if err != nil {
			t.Fatalf("case %d (%d bytes, %d paths): %v", it, p.Bytes, len(p.Paths), err)
		}
		checkRun(t, "free", p, free)
		c := model.GammaContention{DirectGamma: 2 * r.Float64(), StagedGamma: 2 * r.Float64()}
		slow, err := Simulate(p, c)
		if err != nil {
			t.Fatalf("case %d, contention %+v: %v", it, c, err)
		}
		checkRun(t, "contended", p, slow)
		if slow.TotalUS < free.TotalUS*(1-1e-12) {
			t.Fatalf("case %d: contention %+v makes it faster: %g us against %g us", it, c, slow.TotalUS, free.TotalUS)
		}
	}
	if cycled < 100 {
		t.Fatalf("only %d staged paths cycled their slots", cycled)
	}
}

// clonePlan copies p deeply enough to mutate its ops and waits.
func clonePlan(p *Plan) *Plan {
	q := *p
	q.Ops = slices.Clone(p.Ops)
	for i := range q.Ops {
		q.Ops[i].Waits = slices.Clone(q.Ops[i].Waits)
	}
	q.Waited = slices.Clone(p.Waited)
	return &q
}

// deleteOp removes op i from p; waits for it are dropped, later indices
// shift down.
func deleteOp(p *Plan, i int) *Plan {
	q := clonePlan(p)
	q.Ops = slices.Delete(q.Ops, i, i+1)
	q.Waited = slices.Delete(q.Waited, i, i+1)
	for j := range q.Ops {
		var ws []int
		for _, w := range q.Ops[j].Waits {
			switch {
			case w < i:
				ws = append(ws, w)
			case w > i:
				ws = append(ws, w-1)
			}
		}
		q.Ops[j].Waits = ws
	}
	return q
}

// prevOnStream is the op before i on its stream, or -1.
func prevOnStream(p *Plan, i int) int {
	for j := i - 1; j >= 0; j-- {
		if p.Ops[j].Stream == p.Ops[i].Stream {
			return j
		}
	}
	return -1
}

var logged = map[string]bool{}

func wantHazard(t *testing.T, what string, err error, kinds ...string) {
	t.Helper()
	var h *Hazard
	if !errors.As(err, &h) {
		t.Fatalf("%s: want a hazard, got %v", what, err)
	}
	if !slices.Contains(kinds, h.Kind) {
		t.Fatalf("%s: want a %v hazard, got %v", what, kinds, h)
	}
	if !logged[what] {
		logged[what] = true
		t.Logf("%s: %v", what, err)
	}
}

// (b) Wrong overlap or a lost chunk fails: on random plans, drop a wait
// that held an op back, swap two ops of a stream (the events stay with
// the positions, as an executor records them), or delete an op. Which
// mutations must produce a hazard is decided from the unmutated run's
// times, where the mutation provably lets a copy overtake another (a wait
// that never held anything back is not a hazard to report).
func TestSimulateMutationsFail(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var drained, written, reordered, deadlocked, lost int
	for it := 0; it < 800; it++ {
		split, maxStage := randomSplit(r, 1<<20)
		p, err := Build(split, maxStage)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Simulate(p, model.GammaContention{})
		if err != nil {
			t.Fatalf("case %d unmutated: %v", it, err)
		}
		end := func(i int) float64 {
			if i < 0 {
				return 0
			}
			return res.Ops[i].EndUS
		}
		// At most a few of each kind per plan: slot cycling gives
		// hundreds of candidates, all alike.
		nDrained, nWritten := 0, 0
		for i, op := range p.Ops {
			if op.N == 0 || len(op.Waits) == 0 {
				continue
			}
			w := op.Waits[0]
			alpha, _, eps := p.hop(op)
			// Without the wait, op starts when its stream frees up; the
			// ops before it keep their times.
			dataStart := end(prevOnStream(p, i)) + eps + alpha
			switch {
			case op.Hop == 0 && p.Ops[w].N > 0 && dataStart < end(w) && nDrained < 3:
				// The slot's previous chunk is still being read out.
				q := clonePlan(p)
				q.Ops[i].Waits = nil
				_, err := Simulate(q, model.GammaContention{})
				wantHazard(t, "slot-drained wait dropped", err, "slot overwritten")
				drained++
				nDrained++
			case op.Hop == 1 && dataStart < end(w) && nWritten < 3:
				// The chunk is still being written into the slot.
				q := clonePlan(p)
				q.Ops[i].Waits = nil
				_, err := Simulate(q, model.GammaContention{})
				wantHazard(t, "first-hop wait dropped", err, "read before write")
				written++
				nWritten++
			}
		}
		for pi, pp := range p.Paths {
			var ops []int
			for i, op := range p.Ops {
				if op.Path == pi {
					ops = append(ops, i)
				}
			}
			last := ops[len(ops)-1]
			if p.Ops[last].N > 0 {
				// Nobody waits for a path's last op: without it its bytes
				// never arrive, and only the destination shows it.
				_, err := Simulate(deleteOp(p, last), model.GammaContention{})
				var h *Hazard
				if err == nil || errors.As(err, &h) || !strings.Contains(err.Error(), "differ") {
					t.Fatalf("case %d: path %d's last op deleted: %v", it, pi, err)
				}
				lost++
			}
			if !pp.Path.Staged || pp.Chunks < 2 {
				continue
			}
			f0, f1 := ops[0], ops[2]
			if pp.Slots == 1 {
				// Chunk 1's first hop waits for chunk 0's second hop,
				// which now waits for chunk 1's first hop.
				q := clonePlan(p)
				q.Ops[f0], q.Ops[f1] = q.Ops[f1], q.Ops[f0]
				if _, err := Simulate(q, model.GammaContention{}); err == nil || !strings.Contains(err.Error(), "deadlock") {
					t.Fatalf("case %d: first hops swapped with one slot: %v", it, err)
				}
				deadlocked++
				continue
			}
			// Chunk 1's first hop runs first; chunk 0's second hop waits
			// for it (the event stayed at the position) and reads slot 0
			// before chunk 0's first hop, now second, has filled it.
			h := p.Ops[f0]
			alpha1, rate1, _ := p.hop(h)
			alpha2, _, eps := p.hop(p.Ops[ops[1]])
			if h.N > 0 && eps+alpha2 < alpha1+float64(h.N)/rate1 {
				q := clonePlan(p)
				q.Ops[f0], q.Ops[f1] = q.Ops[f1], q.Ops[f0]
				_, err := Simulate(q, model.GammaContention{})
				wantHazard(t, "first hops swapped", err, "read before write")
				reordered++
			}
			// A lost first hop: its second hop reads a slot nothing wrote
			// its bytes into.
			_, err := Simulate(deleteOp(p, f1), model.GammaContention{})
			wantHazard(t, "first hop deleted", err, "unwritten read", "read before write")
		}
	}
	t.Logf("hazards: %d slot-drained waits, %d first-hop waits, %d swaps, %d deadlocks, %d lost ops", drained, written, reordered, deadlocked, lost)
	if drained < 100 || written < 100 || reordered < 50 || deadlocked < 20 || lost < 200 {
		t.Fatal("too few mutations exercised")
	}
}

func TestSimulateRejects(t *testing.T) {
	direct := model.Path{Name: model.DirectName, Alpha1US: 1, Beta1GBps: 100}
	p, err := Build(model.Split{Bytes: 100, Paths: []model.Share{{Path: direct, Bytes: 100}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Simulate(nil, model.GammaContention{}); err == nil {
		t.Error("nil plan simulated")
	}
	if _, err := Simulate(p, model.GammaContention{DirectGamma: -1}); err == nil {
		t.Error("negative slowdown accepted")
	}
	q := clonePlan(p)
	q.Ops[0].Waits = []int{0}
	if _, err := Simulate(q, model.GammaContention{}); err == nil {
		t.Error("an op waiting for itself simulated")
	}
	q = clonePlan(p)
	q.Ops[0].N = 101
	if _, err := Simulate(q, model.GammaContention{}); err == nil {
		t.Error("an op past the buffer simulated")
	}
	q = clonePlan(p)
	q.Paths = slices.Clone(p.Paths)
	q.Paths[0].Path.Beta1GBps = 0
	if _, err := Simulate(q, model.GammaContention{}); err == nil {
		t.Error("a zero bandwidth simulated")
	}
}

// The paths of the H200 reading in docs/model.md section 8: one peer copy
// at 390 GB/s, and a host-staged path whose pipelined rate is about
// 51 GB/s at the shares that matter.
var (
	h200Direct = model.Path{Name: model.DirectName, Alpha1US: 8, Beta1GBps: 390}
	h200Host   = model.Path{Name: model.HostName, Staged: true, Alpha1US: 3, Beta1GBps: 68, Alpha2US: 3, Beta2GBps: 66, EpsilonUS: 5}
)

// staticSplit puts pct percent of n on the host path, in the chunk count
// eq. 15 gives for that share (Multi-path model; the second hop is the
// slower one), the rest on the direct path.
func staticSplit(n int64, pct int) model.Split {
	h := n * int64(pct) / 100
	k := max(1, int(math.Round(model.OptimalChunksContinuous(h200Host, float64(h), model.SecondHopBound))))
	return model.Split{Bytes: n, Paths: []model.Share{{Path: h200Direct, Bytes: n - h, Chunks: 1}, {Path: h200Host, Bytes: h, Chunks: k}}}
}

// (c) With no contention the simulation runs the model's own assumptions,
// so it must reproduce the model's prediction for the model's split. It
// does so exactly, path by path, once the launch offsets are taken out:
// every path of a plan starts at t=0, while the model starts path i
// Share.StartUS later (the startups of the paths launched before it,
// Algorithm 1 line 20). The first launched path has no offset, and the
// model's paths finish together, so the transfer's total agrees.
func TestSimulateMatchesModel(t *testing.T) {
	gpu := model.Path{Name: model.GPUStagedName(2), Staged: true, Alpha1US: 2, Beta1GBps: 120, Alpha2US: 2, Beta2GBps: 110, EpsilonUS: 3}
	gpuSlow2 := model.Path{Name: model.GPUStagedName(2), Staged: true, Alpha1US: 2, Beta1GBps: 200, Alpha2US: 4, Beta2GBps: 80, EpsilonUS: 3}
	pcieHost := model.Path{Name: model.HostName, Staged: true, Alpha1US: 8, Beta1GBps: 25, Alpha2US: 8, Beta2GBps: 24, EpsilonUS: 10}
	sets := []struct {
		name  string
		paths []model.Path
	}{
		{"h200 direct+host", []model.Path{h200Direct, h200Host}},
		{"direct+gpu+host", []model.Path{{Name: model.DirectName, Alpha1US: 3, Beta1GBps: 150}, gpu, pcieHost}},
		{"direct+gpu (second hop slower)", []model.Path{{Name: model.DirectName, Alpha1US: 3, Beta1GBps: 100}, gpuSlow2}},
		{"gpu+host (no direct)", []model.Path{gpu, pcieHost}},
	}
	sizes := []int64{8 << 20, 64 << 20, 256 << 20, 1 << 30}
	if testing.Short() {
		sizes = sizes[:3]
	}
	o := model.DefaultOptions()
	for _, set := range sets {
		for _, n := range sizes {
			if n == 1<<30 && set.name != "h200 direct+host" {
				continue // one 1 GiB run is enough bytes to move
			}
			split, err := model.Solve(set.paths, n, o, false)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Build(split, 0)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Simulate(p, model.GammaContention{})
			if err != nil {
				t.Fatalf("%s, %d bytes: %v", set.name, n, err)
			}
			// Path by path: the model's finish less its launch offset.
			j := 0
			var maxStart float64
			for _, sh := range split.Paths {
				if sh.Bytes <= 0 {
					continue
				}
				// Build's chunks differ by up to a byte, the model's are
				// equal: a nanosecond covers that.
				want := sh.PredictedUS - sh.StartUS
				if math.Abs(res.PathUS[j]-want) > 1e-3 {
					t.Errorf("%s, %d bytes, path %s (%d bytes, %d chunks): simulated %.6f us, model %.6f us less its %.3f us launch offset",
						set.name, n, sh.Path.Name, sh.Bytes, sh.Chunks, res.PathUS[j], sh.PredictedUS, sh.StartUS)
				}
				maxStart = max(maxStart, sh.StartUS)
				j++
			}
			dev := (res.TotalUS - split.PredictedUS) / split.PredictedUS
			if math.Abs(dev) > 0.02 || res.TotalUS > split.PredictedUS+1e-3 || res.TotalUS < split.PredictedUS-maxStart-1e-3 {
				t.Errorf("%s, %d bytes: simulated %.3f us, model %.3f us (%+.4f%%)", set.name, n, res.TotalUS, split.PredictedUS, 100*dev)
			}
			t.Logf("%-32s %5d MiB: %d paths, model %9.3f us, simulated %9.3f us (%+.2e)", set.name, n>>20, len(p.Paths), split.PredictedUS, res.TotalUS, dev)

			if n != 64<<20 {
				continue
			}
			// Two slots per path cost nothing: chunk c+2's first hop waits
			// for chunk c's second hop, which with equal chunks ends by
			// the time either stage could use the slot again.
			var slot int64
			for _, pp := range p.Paths {
				slot = max(slot, pp.SlotBytes)
			}
			p2, err := Build(split, 2*slot)
			if err != nil {
				t.Fatal(err)
			}
			res2, err := Simulate(p2, model.GammaContention{})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(res2.TotalUS-res.TotalUS) > 1e-9*res.TotalUS {
				t.Errorf("%s, %d bytes: two slots take %.6f us, unbounded staging %.6f us", set.name, n, res2.TotalUS, res.TotalUS)
			}
			// One slot serializes a staged path: every chunk crosses both
			// hops before the next one starts. (The limit is one slot of
			// the largest chunk; paths with smaller chunks get more.)
			p1, err := Build(split, slot)
			if err != nil {
				t.Fatal(err)
			}
			res1, err := Simulate(p1, model.GammaContention{})
			if err != nil {
				t.Fatal(err)
			}
			serial := 0
			for j, pp := range p1.Paths {
				if !pp.Path.Staged || pp.Slots != 1 {
					continue
				}
				serial++
				s1, s2 := pp.Path.Alpha1US, pp.Path.EpsilonUS+pp.Path.Alpha2US
				want := float64(pp.Chunks)*(s1+s2) + float64(pp.Bytes)*(1/(pp.Path.Beta1GBps*1e3)+1/(pp.Path.Beta2GBps*1e3))
				if math.Abs(res1.PathUS[j]-want) > 1e-9*want {
					t.Errorf("%s, %d bytes, path %s with one slot: %.6f us, want %.6f us", set.name, n, pp.Path.Name, res1.PathUS[j], want)
				}
			}
			if serial == 0 {
				t.Errorf("%s, %d bytes: no staged path got one slot", set.name, n)
			}
		}
	}
}

// (d) Contention. docs/model.md section 8 records, on an H200 pair, a
// host share of 6% and 8% of a large message gaining a few percent over
// the direct copy alone and 12% losing, while the contention-free model
// picks about 12% and predicts 1.13x. Its reading: the host path runs at
// about 70% of its own rate while the direct copy runs, and the direct
// copy loses a few percent. With those two terms (StagedGamma 0.43 =
// 1/0.7 - 1, DirectGamma 0.03) the simulation has that shape.
func TestSimulateContentionShape(t *testing.T) {
	n := int64(256 << 20)
	c := model.GammaContention{DirectGamma: 0.03, StagedGamma: 0.43}
	run := func(s model.Split, c model.GammaContention) float64 {
		t.Helper()
		p, err := Build(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Simulate(p, c)
		if err != nil {
			t.Fatal(err)
		}
		return res.TotalUS
	}
	alone := run(model.Split{Bytes: n, Paths: []model.Share{{Path: h200Direct, Bytes: n, Chunks: 1}}}, c)
	if want := h200Direct.TimeUS(float64(n), 1); math.Abs(alone-want) > 1e-9*want {
		t.Fatalf("direct alone: %g us, want %g us (nothing to contend with)", alone, want)
	}
	free, err := model.Solve([]model.Path{h200Direct, h200Host}, n, model.DefaultOptions(), false)
	if err != nil {
		t.Fatal(err)
	}
	hostPct := 100 * free.Paths[1].Theta
	if hostPct < 10 || hostPct > 13 || free.DirectOnlyUS/free.PredictedUS < 1.1 {
		t.Fatalf("the contention-free model puts %.1f%% on the host path for %.3fx; the fixture wants about 12%% and 1.13x", hostPct, free.DirectOnlyUS/free.PredictedUS)
	}
	speedup := map[int][2]float64{} // share -> free, contended
	for _, pct := range []int{6, 8, 10, 12} {
		s := staticSplit(n, pct)
		f, cd := run(s, model.GammaContention{}), run(s, c)
		if cd < f {
			t.Errorf("%d%%: contention makes it faster (%g < %g us)", pct, cd, f)
		}
		speedup[pct] = [2]float64{alone / f, alone / cd}
		t.Logf("host %2d%% (%d chunks): %.3fx without contention, %.3fx with %+v", pct, s.Paths[1].Chunks, alone/f, alone/cd, c)
	}
	freeContended := alone / run(free, c)
	t.Logf("the contention-free model's split (host %.1f%%): predicted %.3fx, %.3fx with contention", hostPct, free.DirectOnlyUS/free.PredictedUS, freeContended)
	for pct, s := range speedup {
		if s[0] <= 1 {
			t.Errorf("%d%% does not gain without contention: %.3fx", pct, s[0])
		}
	}
	if s6, s8 := speedup[6][1], speedup[8][1]; s6 <= 1 || s6 > 1.1 || s8 <= 1 || s8 > 1.1 {
		t.Errorf("with contention 6%% and 8%% should gain a little: %.3fx, %.3fx", s6, s8)
	}
	if s10, s12 := speedup[10][1], speedup[12][1]; !(s12 < 0.95 && s12 < s10 && s10 < speedup[8][1]) {
		t.Errorf("with contention 12%% should lose, more than 10%%: %.3fx, %.3fx", s10, s12)
	}
	if freeContended >= 1 {
		t.Errorf("the contention-free split gains %.3fx under contention; it should lose to the direct copy", freeContended)
	}
}

// A direct-path slowdown alone cannot give that shape: while the direct
// share sets the time, each host byte costs the direct copy the slowdown
// over the time the host path runs, which grows with the share as fast as
// the share itself, so every share gains or every share loses (timing
// only; the runs above move the bytes).
func TestDirectSlowdownAloneCannotShape(t *testing.T) {
	n := int64(256 << 20)
	alone := h200Direct.TimeUS(float64(n), 1)
	for g := 0.0; g <= 0.5; g += 0.005 {
		var s [3]float64
		for i, pct := range []int{6, 8, 12} {
			p, err := Build(staticSplit(n, pct), 0)
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.run(model.GammaContention{DirectGamma: g})
			if err != nil {
				t.Fatal(err)
			}
			s[i] = alone / res.TotalUS
		}
		if s[0] > 1 && s[1] > 1 && s[2] < 1 {
			t.Fatalf("DirectGamma %.3f alone: 6%% %.3fx, 8%% %.3fx, 12%% %.3fx", g, s[0], s[1], s[2])
		}
	}
}
