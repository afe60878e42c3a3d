package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Simulate runs plan over t and predicts its timing and link load.
//
// It is an event-driven flow-level simulation: a send and its matching recv
// become one flow once both are posted and their dependencies are done; the
// flow waits for the sum of the startups (alpha) of the links on its route,
// then moves its bytes at a rate that is recomputed, max-min fairly, each
// time a flow starts or ends on a link it shares (directly or through other
// flows). Local copies and reductions are flows on their GPU's memory.
func Simulate(t *topo.Topology, plan *sched.Plan, opt Options) (*Result, error) {
	return simulate(t, plan, opt, nil)
}

// simulate is Simulate of a plan whose rank programs may be several
// lanes' programs one after the other (lanes, see lanes.go; nil: one lane).
func simulate(t *topo.Topology, plan *sched.Plan, opt Options, lanes *laneSteps) (*Result, error) {
	if t == nil || plan == nil {
		return nil, errors.New("sim: nil topology or plan")
	}
	if plan.NRanks != len(plan.Ranks) {
		return nil, fmt.Errorf("sim: plan has %d rank programs for %d ranks", len(plan.Ranks), plan.NRanks)
	}
	if n := t.NumGPUs(); n != plan.NRanks {
		return nil, fmt.Errorf("sim: plan has %d ranks but topology %q has %d GPUs", plan.NRanks, t.Name, n)
	}
	nw, err := newNetwork(t)
	if err != nil {
		return nil, fmt.Errorf("sim: topology %q: %w", t.Name, err)
	}
	e, err := newEngine(nw, plan, opt, lanes)
	if err != nil {
		return nil, err
	}
	if err := e.run(); err != nil {
		return nil, err
	}
	return e.result(), nil
}

const noStep = -1

type engine struct {
	nw   *network
	plan *sched.Plan
	opt  Options

	// Steps are numbered globally: rankBase[r] + id.
	rankBase []int32
	stepRank []int32 // only for tracing and errors: rank of a global step
	// st holds the per-step state the event loop touches, together in one
	// 16-byte record so a step costs one cache miss, not four. It has one
	// extra element: st[g+1].rev ends step g's dependents in rev.
	st    []stepState
	rev   []int32
	gpuOf []int32 // global GPU of each rank

	start, end []float64 // per global step, only with Timeline
	memBytes   []float64 // reduce costs more memory passes than copy: scale

	// rankEnd is, per rank, when its latest step completed: once the run
	// is over, when the rank finished (Result.RankEndUS).
	rankEnd []float64

	flows    []flow
	free     []int32
	onLink   [][]int32 // active flows per link
	ceBusy   []bool
	ceQueue  [][]int32
	ceHead   []int
	now      float64
	done     int
	total    int
	events   eventHeap
	seq      uint64
	launchUS float64

	linkBytes []float64
	linkBusy  []float64
	linkSince []float64
	linkMax   []int32

	fill filler

	transfers []Transfer
	flowXfer  []int32 // per flow slot: index in transfers (Trace)

	// Host workers (Options.WorkerGBps > 0; lanes.go): the link of rank
	// r's lane w is workerBase + r*nLanes + w, its node's cores link
	// coresBase + node (coresBase < 0: cores not limited).
	workerBase, coresBase int32
	nLanes                int32
	laneOf                []uint8 // lane of each global step
}

type stepState struct {
	deps    int32 // dependencies not yet done
	partner int32 // send <-> matching recv (global ids); noStep for local ops
	rev     int32 // start of this step's dependents in engine.rev
	posted  bool  // a send or recv whose dependencies are done
}

type flow struct {
	links  []int32
	bytes  float64 // total, in link bytes
	left   float64
	rate   float64 // bytes per us
	last   float64
	alpha  float64
	ver    uint32
	step   int32 // the send, or the local op
	rank   int32 // the rank of step
	peer   int32 // the receiving rank of a send
	gpu    int32 // source GPU (copy engine)
	ce     bool  // holds its GPU's copy engine
	active bool
	real   int64 // bytes the step moves (for link accounting)
}

func newEngine(nw *network, plan *sched.Plan, opt Options, lanes *laneSteps) (*engine, error) {
	e := &engine{nw: nw, plan: plan, opt: opt, launchUS: opt.launchUS(), workerBase: -1, coresBase: -1}
	t := nw.t
	nr := len(plan.Ranks)
	e.rankBase = make([]int32, nr+1)
	e.gpuOf = make([]int32, nr)
	e.rankEnd = make([]float64, nr)
	total := 0
	for r := range plan.Ranks {
		p := &plan.Ranks[r]
		node, local, ok := t.Locate(r)
		if p.Rank != r || !ok || p.Node != node || p.Local != local {
			return nil, fmt.Errorf("sim: rank program %d says rank %d on node %d local %d; topology %q places rank %d on node %d local %d", r, p.Rank, p.Node, p.Local, t.Name, r, node, local)
		}
		e.gpuOf[r] = nw.gpuBase[node] + int32(local)
		e.rankBase[r] = int32(total)
		total += len(p.Steps)
		if total > math.MaxInt32-1 {
			return nil, errors.New("sim: plan has more than 2^31 steps")
		}
	}
	e.rankBase[nr] = int32(total)
	e.total = total
	copyGBps, reduceGBps := opt.copyRates(t)
	nw.addMemory(copyGBps)
	e.memBytes = make([]float64, len(copyGBps))
	for g := range copyGBps {
		e.memBytes[g] = copyGBps[g] / reduceGBps[g]
	}
	if err := e.addWorkers(lanes); err != nil {
		return nil, err
	}
	if err := e.buildDeps(); err != nil {
		return nil, err
	}
	if err := e.match(); err != nil {
		return nil, err
	}
	nl := len(nw.capBpus)
	e.onLink = make([][]int32, nl)
	e.linkBytes = make([]float64, nl)
	e.linkBusy = make([]float64, nl)
	e.linkSince = make([]float64, nl)
	e.linkMax = make([]int32, nl)
	ng := len(copyGBps)
	e.ceBusy = make([]bool, ng)
	e.ceQueue = make([][]int32, ng)
	e.ceHead = make([]int, ng)
	if opt.Timeline {
		e.start = make([]float64, total)
		e.end = make([]float64, total)
	}
	e.fill.init(nl)
	return e, nil
}

// buildDeps counts each step's dependencies and lists its dependents.
func (e *engine) buildDeps() error {
	e.st = make([]stepState, e.total+1)
	for i := range e.st {
		e.st[i].partner = noStep
	}
	for r := range e.plan.Ranks {
		p := &e.plan.Ranks[r]
		base := e.rankBase[r]
		for id := range p.Steps {
			s := &p.Steps[id]
			if s.Op < sched.OpSend || s.Op > sched.OpReduce {
				return fmt.Errorf("sim: rank %d step %d: unknown op %d", r, id, s.Op)
			}
			if s.Len < 0 {
				return fmt.Errorf("sim: rank %d step %d: negative length %d", r, id, s.Len)
			}
			deps := p.Deps(id)
			e.st[base+int32(id)].deps = int32(len(deps))
			for _, d := range deps {
				if d < 0 || int(d) >= id {
					return fmt.Errorf("sim: rank %d step %d depends on step %d, which is not earlier", r, id, d)
				}
				e.st[base+d+1].rev++
			}
		}
	}
	for i := 1; i <= e.total; i++ {
		e.st[i].rev += e.st[i-1].rev
	}
	e.rev = make([]int32, e.st[e.total].rev)
	fillPos := make([]int32, e.total)
	for i := range fillPos {
		fillPos[i] = e.st[i].rev
	}
	for r := range e.plan.Ranks {
		p := &e.plan.Ranks[r]
		base := e.rankBase[r]
		for id := range p.Steps {
			for _, d := range p.Deps(id) {
				g := base + d
				e.rev[fillPos[g]] = base + int32(id)
				fillPos[g]++
			}
		}
	}
	return nil
}

// match pairs every send with its recv: the k-th send from i to j with tag
// t matches the k-th recv on j from i with tag t, in ascending step id.
// Sends are bucketed by receiver, so each receiver sorts only its own pairs.
func (e *engine) match() error {
	nr := len(e.plan.Ranks)
	cnt := make([]int32, nr+1)
	for r := range e.plan.Ranks {
		for id := range e.plan.Ranks[r].Steps {
			s := &e.plan.Ranks[r].Steps[id]
			if s.Op != sched.OpSend && s.Op != sched.OpRecv {
				continue
			}
			if s.Peer < 0 || int(s.Peer) >= nr {
				return fmt.Errorf("sim: rank %d step %d: peer %d out of range (0..%d)", r, id, s.Peer, nr-1)
			}
			if s.Op == sched.OpSend {
				cnt[s.Peer+1]++
			}
		}
	}
	for i := 1; i <= nr; i++ {
		cnt[i] += cnt[i-1]
	}
	type key struct {
		k    uint64 // other rank << 32 | tag
		step int32  // global
	}
	sends := make([]key, cnt[nr])
	pos := slices.Clone(cnt[:nr])
	for r := range e.plan.Ranks {
		for id := range e.plan.Ranks[r].Steps {
			s := &e.plan.Ranks[r].Steps[id]
			if s.Op == sched.OpSend {
				sends[pos[s.Peer]] = key{uint64(r)<<32 | uint64(uint32(s.Tag)), e.rankBase[r] + int32(id)}
				pos[s.Peer]++
			}
		}
	}
	cmp := func(a, b key) int {
		if a.k != b.k {
			if a.k < b.k {
				return -1
			}
			return 1
		}
		return int(a.step - b.step)
	}
	var recvs []key
	for j := range e.plan.Ranks {
		recvs = recvs[:0]
		for id := range e.plan.Ranks[j].Steps {
			s := &e.plan.Ranks[j].Steps[id]
			if s.Op == sched.OpRecv {
				recvs = append(recvs, key{uint64(s.Peer)<<32 | uint64(uint32(s.Tag)), e.rankBase[j] + int32(id)})
			}
		}
		bucket := sends[cnt[j]:cnt[j+1]]
		slices.SortFunc(bucket, cmp)
		slices.SortFunc(recvs, cmp)
		for k := 0; k < len(bucket) || k < len(recvs); k++ {
			if k >= len(bucket) || (k < len(recvs) && recvs[k].k < bucket[k].k) {
				rc := recvs[k]
				return fmt.Errorf("sim: rank %d step %d: recv from %d tag %d has no matching send", j, rc.step-e.rankBase[j], rc.k>>32, int32(uint32(rc.k)))
			}
			if k >= len(recvs) || bucket[k].k < recvs[k].k {
				sd := bucket[k]
				src := int(sd.k >> 32)
				return fmt.Errorf("sim: rank %d step %d: send to %d tag %d has no matching recv", src, sd.step-e.rankBase[src], j, int32(uint32(sd.k)))
			}
			sg, rg := bucket[k].step, recvs[k].step
			ss, rs := e.step(sg), e.step(rg)
			if ss.Len != rs.Len {
				src := int(bucket[k].k >> 32)
				return fmt.Errorf("sim: rank %d step %d sends %d bytes to rank %d step %d, which receives %d", src, sg-e.rankBase[src], ss.Len, j, rg-e.rankBase[j], rs.Len)
			}
			e.st[sg].partner, e.st[rg].partner = rg, sg
		}
	}
	return nil
}

// rankOf finds the rank of a global step by binary search.
func (e *engine) rankOf(g int32) int {
	r, _ := slices.BinarySearch(e.rankBase, g+1)
	return r - 1
}

func (e *engine) step(g int32) *sched.Step {
	r := e.rankOf(g)
	return &e.plan.Ranks[r].Steps[g-e.rankBase[r]]
}

func (e *engine) run() error {
	for r := range e.plan.Ranks {
		base := e.rankBase[r]
		for id := range e.plan.Ranks[r].Steps {
			if e.st[base+int32(id)].deps == 0 {
				if err := e.ready(r, base+int32(id)); err != nil {
					return err
				}
			}
		}
	}
	for e.events.Len() > 0 {
		ev := e.events.pop()
		if ev.kind == evDone {
			if f := &e.flows[ev.flow]; !f.active || f.ver != ev.ver {
				continue // superseded by a rate change: not a real time
			}
		}
		if ev.t > e.now {
			e.now = ev.t
		}
		switch ev.kind {
		case evActivate:
			e.activate(ev.flow)
		case evDone:
			if err := e.finish(ev.flow); err != nil {
				return err
			}
		}
	}
	if e.done != e.total {
		return e.deadlock()
	}
	return nil
}

// ready is called when step g of rank r has all its dependencies done.
func (e *engine) ready(r int, g int32) error {
	s := &e.plan.Ranks[r].Steps[g-e.rankBase[r]]
	switch s.Op {
	case sched.OpCopy, sched.OpReduce:
		if e.opt.Timeline {
			e.start[g] = e.now
		}
		gpu := e.gpuOf[r]
		fi := e.newFlow(g, gpu)
		e.flows[fi].rank = int32(r)
		f := &e.flows[fi]
		f.real = s.Len
		f.bytes = float64(s.Len)
		if s.Op == sched.OpReduce {
			f.bytes *= e.memBytes[gpu]
		}
		f.links = append(f.links, e.nw.memBase+gpu)
		f.links = e.appendWorker(f.links, r, g)
		f.alpha = e.launchUS
		e.schedule(e.now+f.alpha, evActivate, fi, 0)
		return nil
	}
	e.st[g].posted = true
	p := e.st[g].partner
	if !e.st[p].posted {
		return nil
	}
	send, recv := g, p
	sr, rr := r, int(s.Peer)
	if s.Op == sched.OpRecv {
		send, recv = p, g
		sr, rr = rr, sr
	}
	return e.startTransfer(sr, send, rr, recv)
}

func (e *engine) newFlow(step, gpu int32) int32 {
	var fi int32
	if n := len(e.free); n > 0 {
		fi = e.free[n-1]
		e.free = e.free[:n-1]
	} else {
		e.flows = append(e.flows, flow{})
		fi = int32(len(e.flows) - 1)
	}
	f := &e.flows[fi]
	*f = flow{links: f.links[:0], ver: f.ver + 1, step: step, gpu: gpu}
	return fi
}

func (e *engine) startTransfer(sr int, send int32, rr int, recv int32) error {
	if e.opt.Timeline {
		e.start[send], e.start[recv] = e.now, e.now
	}
	ps := &e.plan.Ranks[sr]
	s := &ps.Steps[send-e.rankBase[sr]]
	pr := &e.plan.Ranks[rr]
	fi := e.newFlow(send, e.gpuOf[sr])
	e.flows[fi].rank, e.flows[fi].peer = int32(sr), int32(rr)
	f := &e.flows[fi]
	links, extraUS, err := e.nw.transferRoute(f.links, ps.Node, ps.Local, pr.Node, pr.Local, s.Path)
	if err != nil {
		return fmt.Errorf("sim: rank %d step %d (send to %d, path %q): %w", sr, send-e.rankBase[sr], rr, s.Path, err)
	}
	f.links = links
	f.alpha = extraUS + e.opt.MessageUS
	if len(f.links) == 0 {
		// A send to oneself: a copy through memory.
		f.links = append(f.links, e.nw.memBase+f.gpu)
		f.alpha = e.launchUS
	}
	for _, l := range f.links {
		f.alpha += e.nw.alphaUS[l]
	}
	f.links = e.appendWorker(f.links, sr, send)
	f.links = e.appendWorker(f.links, rr, recv)
	f.real = s.Len
	f.bytes = float64(s.Len)
	if e.opt.Trace {
		for int(fi) >= len(e.flowXfer) {
			e.flowXfer = append(e.flowXfer, -1)
		}
		names := make([]string, len(f.links))
		for i, l := range f.links {
			names[i] = e.nw.name(l)
		}
		solo := soloRate(e.nw.capBpus, f.links) / 1e3
		e.flowXfer[fi] = int32(len(e.transfers))
		e.transfers = append(e.transfers, Transfer{Src: sr, Dst: rr, SendStep: int(send - e.rankBase[sr]),
			RecvStep: int(recv - e.rankBase[rr]), Bytes: s.Len, StartUS: e.now, Links: names, SoloGBps: solo})
	}
	if e.opt.CopyEngineSerial && ps.Node == pr.Node && sr != rr {
		f.ce = true
		if e.ceBusy[f.gpu] {
			e.ceQueue[f.gpu] = append(e.ceQueue[f.gpu], fi)
			if e.opt.Trace {
				e.transfers[e.flowXfer[fi]].QueuedOnCE = true
			}
			return nil
		}
		e.ceBusy[f.gpu] = true
	}
	e.schedule(e.now+f.alpha, evActivate, fi, 0)
	return nil
}

// activate puts a flow on its links after its startup.
func (e *engine) activate(fi int32) {
	f := &e.flows[fi]
	f.active = true
	f.last = e.now
	f.left = f.bytes
	if e.opt.Trace && e.flowXfer != nil && int(fi) < len(e.flowXfer) && e.flowXfer[fi] >= 0 {
		e.transfers[e.flowXfer[fi]].ActiveUS = e.now
	}
	if f.left <= 0 {
		f.ver++
		e.schedule(e.now, evDone, fi, f.ver)
		return
	}
	for _, l := range f.links {
		if len(e.onLink[l]) == 0 {
			e.linkSince[l] = e.now
		}
		if e.opt.Trace && int(fi) < len(e.flowXfer) && e.flowXfer[fi] >= 0 {
			me := e.flowXfer[fi]
			for _, o := range e.onLink[l] {
				if int(o) < len(e.flowXfer) && e.flowXfer[o] >= 0 {
					ot := e.flowXfer[o]
					name := e.nw.name(l)
					e.transfers[me].Shared = append(e.transfers[me].Shared, Overlap{int(ot), name})
					e.transfers[ot].Shared = append(e.transfers[ot].Shared, Overlap{int(me), name})
				}
			}
		}
		e.onLink[l] = append(e.onLink[l], fi)
		if n := int32(len(e.onLink[l])); n > e.linkMax[l] {
			e.linkMax[l] = n
		}
	}
	e.rebalance(f.links)
}

// finish completes a flow: its bytes have arrived.
func (e *engine) finish(fi int32) error {
	f := &e.flows[fi]
	f.active = false
	placed := f.bytes > 0 // an empty flow never joined its links
	for _, l := range f.links {
		if !placed {
			break
		}
		list := e.onLink[l]
		for i, x := range list {
			if x == fi {
				list[i] = list[len(list)-1]
				e.onLink[l] = list[:len(list)-1]
				break
			}
		}
		if len(e.onLink[l]) == 0 {
			e.linkBusy[l] += e.now - e.linkSince[l]
		}
		e.linkBytes[l] += float64(f.real)
	}
	if placed {
		e.rebalance(f.links)
	}
	if e.opt.Trace && int(fi) < len(e.flowXfer) && e.flowXfer[fi] >= 0 {
		e.transfers[e.flowXfer[fi]].EndUS = e.now
		e.flowXfer[fi] = -1
	}
	step, gpu, ce, rank, peer := f.step, f.gpu, f.ce, f.rank, f.peer
	e.free = append(e.free, fi)
	if ce {
		e.ceBusy[gpu] = false
		if q := e.ceQueue[gpu]; e.ceHead[gpu] < len(q) {
			next := q[e.ceHead[gpu]]
			e.ceHead[gpu]++
			if e.ceHead[gpu] == len(q) {
				e.ceQueue[gpu], e.ceHead[gpu] = q[:0], 0
			}
			e.ceBusy[gpu] = true
			e.schedule(e.now+e.flows[next].alpha, evActivate, next, 0)
		}
	}
	if err := e.complete(int(rank), step); err != nil {
		return err
	}
	if p := e.st[step].partner; p != noStep {
		return e.complete(int(peer), p)
	}
	return nil
}

// complete marks step g of rank r done and readies the steps that waited
// only on it (dependencies never cross ranks).
func (e *engine) complete(r int, g int32) error {
	e.done++
	e.rankEnd[r] = e.now // time never goes back: the last call is the rank's end
	if e.opt.Timeline {
		e.end[g] = e.now
	}
	for _, d := range e.rev[e.st[g].rev:e.st[g+1].rev] {
		e.st[d].deps--
		if e.st[d].deps == 0 {
			if err := e.ready(r, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// rebalance recomputes max-min fair rates for every flow connected to the
// given links through shared links, and reschedules those whose rate
// changed.
func (e *engine) rebalance(seed []int32) {
	fl := &e.fill
	fl.collect(e, seed)
	for _, fi := range fl.flows {
		f := &e.flows[fi]
		f.left -= f.rate * (e.now - f.last)
		if f.left < 0 {
			f.left = 0
		}
		f.last = e.now
	}
	fl.solve(e)
	for i, fi := range fl.flows {
		f := &e.flows[fi]
		nr := fl.rates[i]
		if nr == f.rate {
			continue // same rate: its completion event still holds
		}
		f.rate = nr
		f.ver++
		e.schedule(e.now+f.left/nr, evDone, fi, f.ver)
	}
}

func (e *engine) schedule(t float64, kind uint8, fi int32, ver uint32) {
	e.seq++
	e.events.push(event{t: t, seq: e.seq, kind: kind, flow: fi, ver: ver})
}

// deadlock explains why steps never ran.
func (e *engine) deadlock() error {
	for r := range e.plan.Ranks {
		base := e.rankBase[r]
		for id := range e.plan.Ranks[r].Steps {
			g := base + int32(id)
			if sg := &e.st[g]; sg.deps == 0 && sg.partner != noStep && sg.posted && !e.st[sg.partner].posted {
				s := &e.plan.Ranks[r].Steps[id]
				return fmt.Errorf("sim: deadlock after %d of %d steps: rank %d step %d (%s with %d tag %d) waits for a peer that never posts", e.done, e.total, r, id, s.Op, s.Peer, s.Tag)
			}
		}
	}
	return fmt.Errorf("sim: deadlock after %d of %d steps", e.done, e.total)
}

func (e *engine) result() *Result {
	res := &Result{TotalUS: e.now, RankEndUS: e.rankEnd}
	best := -1.0
	for l := range e.nw.capBpus {
		if !e.nw.used[l] || e.linkBytes[l] == 0 {
			continue
		}
		ls := LinkStat{Name: e.nw.names[l], Bytes: int64(math.Round(e.linkBytes[l])), BusyUS: e.linkBusy[l], MaxFlows: int(e.linkMax[l])}
		if e.now > 0 {
			ls.Utilisation = e.linkBytes[l] / (e.nw.capBpus[l] * e.now)
		}
		res.Links = append(res.Links, ls)
		if need := e.linkBytes[l] / e.nw.capBpus[l]; need > best {
			best, res.Bottleneck = need, ls.Name
		}
	}
	if e.opt.Timeline {
		res.Steps = make([]StepTiming, 0, e.total)
		for r := range e.plan.Ranks {
			base := e.rankBase[r]
			for id := range e.plan.Ranks[r].Steps {
				res.Steps = append(res.Steps, StepTiming{Rank: r, Step: id, StartUS: e.start[base+int32(id)], EndUS: e.end[base+int32(id)]})
			}
		}
	}
	res.Transfers = e.transfers
	return res
}
