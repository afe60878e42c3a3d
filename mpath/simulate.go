package mpath

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/goring-hpc/goring/model"
)

// OpTime is when one op of a simulated plan ran.
type OpTime struct {
	// StartUS is when the op was issued: its stream was free and every op
	// it waits for had finished.
	StartUS float64
	// DataUS is when its bytes began to move: StartUS, plus epsilon for a
	// second hop (the staging synchronization), plus the hop's startup.
	DataUS float64
	// EndUS is when its last byte arrived.
	EndUS float64
}

// Result is a simulated run of a Plan.
type Result struct {
	TotalUS float64   // when the last op finished
	Ops     []OpTime  // per op of Plan.Ops
	PathUS  []float64 // when each of Plan.Paths finished its last op
}

// Hazard is an ordering error Simulate found: an op read staging bytes
// before the copy that fills them had finished, or overwrote staging bytes
// whose chunk had not been read out yet.
type Hazard struct {
	Kind string // "read before write", "slot overwritten", "unwritten read"
	Path int    // index into Plan.Paths
	// Op is the reader (read before write, unwritten read) or the writer
	// that overwrote (slot overwritten); Other is the write it should have
	// waited for, or the read it overtook (-1 when there is none).
	Op, Other int
	// StageLo and StageHi are the staging bytes concerned.
	StageLo, StageHi int64
	// OpUS and OtherUS are the data intervals (DataUS, EndUS) of Op and
	// Other; for a slot overwritten, OtherUS spans from the overtaken
	// chunk's write to its read (the time its bytes were live in the slot).
	OpUS, OtherUS [2]float64
}

func (h *Hazard) Error() string {
	switch h.Kind {
	case "unwritten read":
		return fmt.Sprintf("mpath: hazard on path %d: op %d reads staging [%d,%d) during [%.3f,%.3f] us, but no op writes the bytes it should carry there",
			h.Path, h.Op, h.StageLo, h.StageHi, h.OpUS[0], h.OpUS[1])
	case "read before write":
		return fmt.Sprintf("mpath: hazard on path %d: op %d reads staging [%d,%d) from %.3f us, before op %d has written it (%.3f-%.3f us)",
			h.Path, h.Op, h.StageLo, h.StageHi, h.OpUS[0], h.Other, h.OtherUS[0], h.OtherUS[1])
	}
	return fmt.Sprintf("mpath: hazard on path %d: op %d writes staging [%d,%d) during [%.3f,%.3f] us, over the chunk op %d has yet to read out (written from %.3f us, read until %.3f us)",
		h.Path, h.Op, h.StageLo, h.StageHi, h.OpUS[0], h.OpUS[1], h.Other, h.OtherUS[0], h.OtherUS[1])
}

// Simulate runs plan p on an idealised device and checks that it is
// correct.
//
// Timing. Each stream runs its ops in index order; an op is issued when
// its stream is free and every op in its Waits has finished. A second hop
// (an op reading staging) then spends the path's EpsilonUS on the staging
// synchronization, every op spends its hop's startup (Alpha1US for a direct
// copy or a first hop, Alpha2US for a second hop), and then moves its bytes
// at the hop's bandwidth (Beta1GBps, Beta2GBps; 1 GB/s = 1e3 bytes/us),
// slowed by c while it applies (model.GammaSlowedRate: beta/(1+gamma) with
// c's DirectGamma for a direct copy while any staged hop moves bytes, its
// StagedGamma for a staged hop while a direct copy moves bytes; the zero
// value is the model's assumption of independent paths). Rates are
// constant between events (an op issued, starting to move bytes, or
// finishing), and the simulation advances from event to event over the
// bytes each op has left. This follows the multi-path model's cost of a
// chunk (Multi-path model, eq. 12-13: stage 1 takes alpha1 + c/beta1,
// stage 2 epsilon + alpha2 + c/beta2) and, with c zero, reproduces its
// pipeline time s1 + s2 + (k-1)*max(s1, s2) exactly; see the package
// documentation for where it departs from the model.
//
// Correctness. Simulate then checks each staging buffer: every second
// hop's bytes must have been written by the first hop carrying the same
// source bytes, and that write must have ended before the read began; no
// other write may touch those staging bytes from the moment that write
// begins until the read ends. A violation is returned as a *Hazard. It
// finally moves real bytes: a patterned source, a destination filled with
// its complement and one staging buffer per staged path, each op's copy
// applied in the order the ops finished, and returns an error unless the
// destination equals the source. A plan whose waits can never be met is an
// error too.
func Simulate(p *Plan, c model.GammaContention) (Result, error) {
	if err := p.check(c); err != nil {
		return Result{}, err
	}
	res, err := p.run(c)
	if err != nil {
		return res, err
	}
	if h := p.hazard(res.Ops); h != nil {
		return res, h
	}
	return res, p.moveBytes(res.Ops)
}

// hop returns the startup, bandwidth (bytes/us) and synchronization cost of
// op's hop.
func (p *Plan) hop(op Op) (alphaUS, bytesPerUS, epsUS float64) {
	path := p.Paths[op.Path].Path
	if op.Hop == 1 {
		return path.Alpha2US, path.Beta2GBps * 1e3, path.EpsilonUS
	}
	return path.Alpha1US, path.Beta1GBps * 1e3, 0
}

// check rejects plans Simulate cannot run: out-of-range indices, buffers
// and offsets, and figures that are not finite and positive.
func (p *Plan) check(c model.GammaContention) error {
	if p == nil {
		return fmt.Errorf("mpath: no plan")
	}
	if !(c.DirectGamma >= 0 && c.StagedGamma >= 0) || math.IsInf(c.DirectGamma, 0) || math.IsInf(c.StagedGamma, 0) {
		return fmt.Errorf("mpath: contention %+v: gammas must be finite and non-negative", c)
	}
	for i, op := range p.Ops {
		if op.Path < 0 || op.Path >= len(p.Paths) {
			return fmt.Errorf("mpath: op %d: path %d of %d", i, op.Path, len(p.Paths))
		}
		if op.Stream < 0 || op.Stream >= p.Streams {
			return fmt.Errorf("mpath: op %d: stream %d of %d", i, op.Stream, p.Streams)
		}
		if op.Hop != 0 && op.Hop != 1 {
			return fmt.Errorf("mpath: op %d: hop %d", i, op.Hop)
		}
		for _, w := range op.Waits {
			if w < 0 || w >= len(p.Ops) || w == i {
				return fmt.Errorf("mpath: op %d waits for op %d of %d", i, w, len(p.Ops))
			}
		}
		pp := p.Paths[op.Path]
		if (op.From == Stage || op.To == Stage) && !pp.Path.Staged {
			return fmt.Errorf("mpath: op %d: staging on direct path %s", i, pp.Path.Name)
		}
		if (op.From == Stage) != (op.Hop == 1) {
			return fmt.Errorf("mpath: op %d: hop %d reading buffer %d (second hops, and only they, read staging)", i, op.Hop, op.From)
		}
		if op.From == op.To || op.From > Stage || op.To > Stage || op.From == Dst || op.To == Src {
			return fmt.Errorf("mpath: op %d copies buffer %d to buffer %d", i, op.From, op.To)
		}
		if op.N < 0 || op.FromOff < 0 || op.ToOff < 0 ||
			op.FromOff+op.N > p.bufLen(op.From, op.Path) || op.ToOff+op.N > p.bufLen(op.To, op.Path) {
			return fmt.Errorf("mpath: op %d: %d bytes from offset %d to offset %d do not fit the buffers", i, op.N, op.FromOff, op.ToOff)
		}
		alpha, rate, eps := p.hop(op)
		if !(rate > 0) || math.IsInf(rate, 0) || !(alpha >= 0) || math.IsInf(alpha, 0) || !(eps >= 0) || math.IsInf(eps, 0) {
			return fmt.Errorf("mpath: op %d: path %s hop %d has startup %g us, bandwidth %g GB/s, epsilon %g us", i, pp.Path.Name, op.Hop, alpha, rate/1e3, eps)
		}
	}
	return nil
}

func (p *Plan) bufLen(b Buf, path int) int64 {
	if b == Stage {
		return p.Paths[path].StageBytes()
	}
	return p.Bytes
}

// Op states during the run.
const (
	opQueued = iota
	opStarting
	opMoving
	opDone
)

// run is the event-driven timing of the plan.
func (p *Plan) run(c model.GammaContention) (Result, error) {
	n := len(p.Ops)
	res := Result{Ops: make([]OpTime, n), PathUS: make([]float64, len(p.Paths))}
	queues := make([][]int, p.Streams)
	for i, op := range p.Ops {
		queues[op.Stream] = append(queues[op.Stream], i)
	}
	head := make([]int, p.Streams)
	state := make([]uint8, n)
	left := make([]float64, n) // bytes an op still has to move
	var active []int           // ops issued and not finished
	now := 0.0
	for done := 0; done < n; {
		// Issue every op whose stream is free and whose waits are met.
		for s, q := range queues {
			if head[s] == len(q) {
				continue
			}
			i := q[head[s]]
			if state[i] != opQueued || !waitsMet(p.Ops[i].Waits, state) {
				continue
			}
			alpha, _, eps := p.hop(p.Ops[i])
			res.Ops[i] = OpTime{StartUS: now, DataUS: now + eps + alpha}
			state[i], left[i] = opStarting, float64(p.Ops[i].N)
			active = append(active, i)
		}
		if len(active) == 0 {
			return res, p.deadlock(queues, head)
		}
		// Rates for this interval: who slows whom depends on who moves.
		directMoving, stagedMoving := false, false
		for _, i := range active {
			if state[i] == opMoving {
				if p.Paths[p.Ops[i].Path].Path.Staged {
					stagedMoving = true
				} else {
					directMoving = true
				}
			}
		}
		rate := func(i int) float64 {
			_, r, _ := p.hop(p.Ops[i])
			if p.Paths[p.Ops[i].Path].Path.Staged {
				if directMoving {
					r = model.GammaSlowedRate(r, c.StagedGamma)
				}
			} else if stagedMoving {
				r = model.GammaSlowedRate(r, c.DirectGamma)
			}
			return r
		}
		// The next event: an op starts moving bytes or finishes.
		next := math.Inf(1)
		for _, i := range active {
			if state[i] == opStarting {
				next = min(next, res.Ops[i].DataUS)
			} else {
				next = min(next, now+left[i]/rate(i))
			}
		}
		// Advance to it.
		keep := active[:0]
		for _, i := range active {
			switch state[i] {
			case opMoving:
				r := rate(i)
				if now+left[i]/r <= next {
					left[i] = 0
				} else {
					left[i] = max(left[i]-r*(next-now), 0)
				}
			case opStarting:
				if res.Ops[i].DataUS <= next {
					state[i] = opMoving
				}
			}
			if state[i] == opMoving && left[i] == 0 {
				state[i] = opDone
				res.Ops[i].EndUS = next
				head[p.Ops[i].Stream]++
				done++
				continue
			}
			keep = append(keep, i)
		}
		active = keep
		now = next
	}
	for i, op := range p.Ops {
		res.PathUS[op.Path] = max(res.PathUS[op.Path], res.Ops[i].EndUS)
		res.TotalUS = max(res.TotalUS, res.Ops[i].EndUS)
	}
	return res, nil
}

func waitsMet(waits []int, state []uint8) bool {
	for _, w := range waits {
		if state[w] != opDone {
			return false
		}
	}
	return true
}

// deadlock describes a run that stopped with ops left: every stream's next
// op waits for an op that cannot finish.
func (p *Plan) deadlock(queues [][]int, head []int) error {
	for s, q := range queues {
		if head[s] < len(q) {
			i := q[head[s]]
			return fmt.Errorf("mpath: deadlock: op %d (stream %d) waits for ops %v, which never finish", i, s, p.Ops[i].Waits)
		}
	}
	return fmt.Errorf("mpath: deadlock")
}

// hazard checks every staged path's staging buffer against the times of
// the run (see Simulate) and returns the first violation, or nil.
func (p *Plan) hazard(t []OpTime) *Hazard {
	type live struct{ w, r int } // a chunk: its write and its read
	for path := range p.Paths {
		var writes, reads []int
		for i, op := range p.Ops {
			if op.Path != path || op.N == 0 {
				continue
			}
			if op.To == Stage {
				writes = append(writes, i)
			}
			if op.From == Stage {
				reads = append(reads, i)
			}
		}
		var chunks []live
		for _, r := range reads {
			ro := p.Ops[r]
			// The write that put the bytes r should carry into the
			// staging bytes r reads: same source-to-destination offset,
			// covering r's range. Of several, the last one to finish
			// before r starts moving bytes, else the first to finish.
			w, early := -1, false
			for _, cand := range writes {
				wo := p.Ops[cand]
				if wo.FromOff-wo.ToOff != ro.ToOff-ro.FromOff || wo.ToOff > ro.FromOff || wo.ToOff+wo.N < ro.FromOff+ro.N {
					continue
				}
				e := t[cand].EndUS <= t[r].DataUS
				if w < 0 || e && (!early || t[cand].EndUS > t[w].EndUS) || !e && !early && t[cand].EndUS < t[w].EndUS {
					w, early = cand, e
				}
			}
			h := &Hazard{Path: path, Op: r, Other: w, StageLo: ro.FromOff, StageHi: ro.FromOff + ro.N,
				OpUS: [2]float64{t[r].DataUS, t[r].EndUS}}
			if w < 0 {
				h.Kind = "unwritten read"
				return h
			}
			if t[r].DataUS < t[w].EndUS {
				h.Kind, h.OtherUS = "read before write", [2]float64{t[w].DataUS, t[w].EndUS}
				return h
			}
			chunks = append(chunks, live{w, r})
		}
		// No other write may touch a chunk's staging bytes while they are
		// live: from the start of its write to the end of its read.
		for _, ch := range chunks {
			ro := p.Ops[ch.r]
			from, to := t[ch.w].DataUS, t[ch.r].EndUS
			for _, w := range writes {
				wo := p.Ops[w]
				if w == ch.w || wo.ToOff >= ro.FromOff+ro.N || wo.ToOff+wo.N <= ro.FromOff {
					continue
				}
				if t[w].EndUS > from && t[w].DataUS < to {
					return &Hazard{Kind: "slot overwritten", Path: path, Op: w, Other: ch.r,
						StageLo: max(wo.ToOff, ro.FromOff), StageHi: min(wo.ToOff+wo.N, ro.FromOff+ro.N),
						OpUS: [2]float64{t[w].DataUS, t[w].EndUS}, OtherUS: [2]float64{from, to}}
				}
			}
		}
	}
	return nil
}

// moveBytes applies every op's copy to real buffers in the order the ops
// finished and checks that the destination ends up equal to the source.
// With no hazard, applying a copy whole at its end is what the device
// does: no byte it reads is written while it runs.
func (p *Plan) moveBytes(t []OpTime) error {
	src, dst := getBuf(p.Bytes), getBuf(p.Bytes)
	defer putBuf(src)
	defer putBuf(dst)
	fillPattern(src, 0)
	fillPattern(dst, ^uint64(0)) // the complement: every byte differs
	stage := make([][]byte, len(p.Paths))
	for i, pp := range p.Paths {
		if pp.Path.Staged {
			stage[i] = make([]byte, pp.StageBytes())
		}
	}
	buf := func(b Buf, path int) []byte {
		switch b {
		case Src:
			return src
		case Dst:
			return dst
		}
		return stage[path]
	}
	order := make([]int, len(p.Ops))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(t[a].EndUS, t[b].EndUS), cmp.Compare(t[a].DataUS, t[b].DataUS))
	})
	for _, i := range order {
		op := p.Ops[i]
		copy(buf(op.To, op.Path)[op.ToOff:op.ToOff+op.N], buf(op.From, op.Path)[op.FromOff:op.FromOff+op.N])
	}
	if lo := firstDiff(dst, src); lo >= 0 {
		off := lo
		for off < p.Bytes && dst[off] != src[off] {
			off++
		}
		return fmt.Errorf("mpath: destination bytes [%d,%d) (path %s) differ from the source: a chunk was lost or misplaced", lo, off, p.pathAt(lo))
	}
	return nil
}

// bufs keeps the source and destination buffers between runs: fresh
// pages cost more to fault in than the copies cost to simulate.
var bufs sync.Pool

func getBuf(n int64) []byte {
	if b, ok := bufs.Get().(*[]byte); ok && int64(cap(*b)) >= n {
		return (*b)[:n]
	}
	return make([]byte, n)
}

func putBuf(b []byte) { bufs.Put(&b) }

// firstDiff is the first offset where a and b differ, or -1.
func firstDiff(a, b []byte) int64 {
	const block = 1 << 16
	for lo := 0; lo < len(a); lo += block {
		hi := min(lo+block, len(a))
		if bytes.Equal(a[lo:hi], b[lo:hi]) {
			continue
		}
		for i := lo; i < hi; i++ {
			if a[i] != b[i] {
				return int64(i)
			}
		}
	}
	return -1
}

// pathAt names the path that carries byte off of the message.
func (p *Plan) pathAt(off int64) string {
	for _, pp := range p.Paths {
		if off >= pp.Off && off < pp.Off+pp.Bytes {
			return pp.Path.Name
		}
	}
	return "none"
}

// fillPattern writes a pattern that differs from one 8-byte word to the
// next, so a copy to the wrong offset shows, each word xor mask.
func fillPattern(b []byte, mask uint64) {
	word := func(i int) uint64 { return uint64(i/8+1)*0x9E3779B97F4A7C15 ^ mask }
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], word(i))
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], word(i))
	copy(b[i:], w[:])
}
