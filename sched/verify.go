package sched

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/units"
)

// Report summarises a plan that Verify proved correct.
type Report struct {
	Collective coll.Collective
	Algorithm  string
	NRanks     int
	// Steps counts the steps of all ranks; MaxSteps those of the busiest rank.
	Steps    int
	MaxSteps int
	// Transfers counts matched send/recv pairs; InterNodeTransfers those
	// whose two ranks sit on different nodes.
	Transfers          int
	InterNodeTransfers int
	// BytesMoved is the sum of all transfer lengths; InterNodeBytes the part
	// that crosses nodes.
	BytesMoved     int64
	InterNodeBytes int64
	// Per rank (index = rank): steps, sends, bytes sent and received.
	StepsPerRank []int
	SendsPerRank []int
	SentBytes    []int64
	RecvBytes    []int64
	// MaxScratchBytes is the largest scratch buffer of any rank.
	MaxScratchBytes int64
	// CriticalTransfers is the longest chain of transfers through
	// dependencies and matching (a matched pair completes as one event, so
	// it inherits the dependencies of both its sides).
	CriticalTransfers int
	// CriticalInterNode is the largest number of inter-node transfers on any
	// such chain: the "inter-node steps on the critical path" of Parallel Rings
	// (P-1 for a flat ring whose rounds are lock-stepped, nodes-1 for
	// parallel rings).
	CriticalInterNode int
}

// String is the verification summary printed by `goring plan` and saved in
// golden transcripts.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verified %s/%s: %d ranks, %d steps (max %d per rank), %d transfers (%d inter-node), %s moved (%s inter-node)\n",
		r.Collective, r.Algorithm, r.NRanks, r.Steps, r.MaxSteps, r.Transfers, r.InterNodeTransfers,
		byteCount(r.BytesMoved), byteCount(r.InterNodeBytes))
	fmt.Fprintf(&b, "critical path: %d transfers, %d inter-node; scratch up to %s per rank\n",
		r.CriticalTransfers, r.CriticalInterNode, byteCount(r.MaxScratchBytes))
	return b.String()
}

// byteCount prints n with a binary unit when exact ("16MiB"), else in bytes.
func byteCount(n int64) string {
	s := units.FormatBytes(n)
	if s == strconv.FormatInt(n, 10) {
		return s + " B"
	}
	return s
}

// VerifyError is a reason Verify rejects a plan. Kind is one of
// "structure", "bounds", "match", "deadlock", "race", "content".
type VerifyError struct {
	Kind string
	Msg  string
}

func (e *VerifyError) Error() string { return "verify: " + e.Kind + ": " + e.Msg }

func verr(kind, format string, args ...any) error {
	return &VerifyError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// describe names a step for error messages: "rank 3 step 7 (send to 4 tag 2, src[0,64))".
func describe(p *Plan, r, id int) string {
	s := &p.Ranks[r].Steps[id]
	switch s.Op {
	case OpSend:
		return fmt.Sprintf("rank %d step %d (send to %d tag %d, %s[%d,%d))", r, id, s.Peer, s.Tag, s.SrcBuf, s.SrcOff, s.SrcOff+s.Len)
	case OpRecv:
		return fmt.Sprintf("rank %d step %d (recv from %d tag %d, %s[%d,%d))", r, id, s.Peer, s.Tag, s.DstBuf, s.DstOff, s.DstOff+s.Len)
	default:
		return fmt.Sprintf("rank %d step %d (%s %s[%d,%d) -> %s[%d,%d))", r, id, s.Op, s.SrcBuf, s.SrcOff, s.SrcOff+s.Len, s.DstBuf, s.DstOff, s.DstOff+s.Len)
	}
}

// Verify executes the plan symbolically and proves, in this order:
//
//  1. structure: ranks numbered 0..n-1, valid ops, buffers, peers and
//     dependencies, every access inside its buffer, no write to src;
//  2. matching: every send has exactly one recv with the same (sender,
//     receiver, tag), pairs of one triple matching in ascending step id, of
//     the same length;
//  3. completion under rendezvous semantics (a transfer completes only when
//     both sides are posted, and a send or recv is posted only after the
//     previous one of its rank with the same peer and tag): otherwise a
//     deadlock naming the stuck steps;
//  4. no race: two steps of one rank that may run at once (neither reaches
//     the other through that rank's deps) never write the same byte, nor
//     does one read a byte the other writes;
//  5. final content of every dst buffer, per collective (see package doc).
//
// Contents are interval maps from byte ranges to (contributing ranks,
// origin offset), never per byte, so 64 ranks of 64 MiB verify in
// milliseconds. On success the Report summarises the plan.
func Verify(p *Plan) (*Report, error) {
	v, err := verifyExecution(p)
	if err != nil {
		return nil, err
	}
	contents := v.contents
	if p.Collective.Routed() {
		contents = v.moeContents
	}
	if err := contents(); err != nil {
		return nil, err
	}
	return v.report(), nil
}

// verifyExecution runs Verify's checks 1-4 (structure, matching, completion,
// races) and returns the verifier, whose completion order a content check
// replays (Verify's per collective, VerifyMulticast's per message).
func verifyExecution(p *Plan) (*verifier, error) {
	return checkPlan(p, throughRaces)
}

// Verify's checks 2-4, for checkPlan to stop after.
const (
	throughMatching = iota + 2
	throughCompletion
	throughRaces
)

// checkPlan runs Verify's checks from the structure up to and including
// last, and returns the verifier they filled.
func checkPlan(p *Plan, last int) (*verifier, error) {
	if p == nil {
		return nil, verr("structure", "nil plan")
	}
	if err := checkStructure(p); err != nil {
		return nil, err
	}
	v := newVerifier(p)
	if err := v.match(); err != nil {
		return nil, err
	}
	if last >= throughCompletion {
		if err := v.run(); err != nil {
			return nil, err
		}
	}
	if last >= throughRaces {
		for r := range p.Ranks {
			if err := checkRaces(p, r); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// Levels returns the as-soon-as-possible round of every step (index
// [rank][step]): 0 for a step with no deps, else one more than its latest
// dep; a matched send and recv share the round of the later side. It is the
// x axis of `goring plan --svg`. It fails as Verify's first three checks do
// (structure, matching, deadlock).
func Levels(p *Plan) ([][]int32, error) {
	v, err := checkPlan(p, throughCompletion)
	if err != nil {
		return nil, err
	}
	out := make([][]int32, len(p.Ranks))
	for r := range p.Ranks {
		out[r] = v.level[v.base[r]:v.base[r+1]]
	}
	return out, nil
}

// Partners returns, for every step, the step id of the matched step on the
// peer (the peer is Step.Peer), or -1 for copy and reduce. It fails on a
// plan whose structure or matching is wrong.
func Partners(p *Plan) ([][]int32, error) {
	v, err := checkPlan(p, throughMatching)
	if err != nil {
		return nil, err
	}
	out := make([][]int32, len(p.Ranks))
	for r := range p.Ranks {
		out[r] = make([]int32, len(p.Ranks[r].Steps))
		for id := range out[r] {
			g := v.partner[v.base[r]+id]
			if g < 0 {
				out[r][id] = -1
			} else {
				out[r][id] = int32(int(g) - v.base[v.rankOf[g]])
			}
		}
	}
	return out, nil
}

func checkStructure(p *Plan) error {
	n := len(p.Ranks)
	if p.NRanks != n {
		return verr("structure", "plan says %d ranks but has %d programs", p.NRanks, n)
	}
	switch p.DtypeBytes {
	case 1, 2, 4, 8: // the sizes of coll's dtypes
	default:
		return verr("structure", "dtype_bytes %d: want 1, 2, 4 or 8", p.DtypeBytes)
	}
	for r := range p.Ranks {
		rp := &p.Ranks[r]
		if rp.Rank != r {
			return verr("structure", "program %d says it is rank %d", r, rp.Rank)
		}
		z := rp.Sizes
		if z.Src < 0 || z.Dst < 0 || z.Scratch < 0 {
			return verr("structure", "rank %d: negative buffer size %+v", r, z)
		}
		for id := range rp.Steps {
			s := &rp.Steps[id]
			if s.Len < 0 {
				return verr("structure", "%s: negative length", describe(p, r, id))
			}
			reads, writes := false, false
			switch s.Op {
			case OpSend:
				reads = true
			case OpRecv:
				writes = true
			case OpCopy, OpReduce:
				reads, writes = true, true
			default:
				return verr("structure", "rank %d step %d: unknown op %s", r, id, s.Op)
			}
			if s.Op == OpSend || s.Op == OpRecv {
				if s.Peer < 0 || int(s.Peer) >= n {
					return verr("structure", "%s: peer out of range 0..%d", describe(p, r, id), n-1)
				}
				if int(s.Peer) == r {
					return verr("structure", "%s: a rank cannot send to itself (use copy)", describe(p, r, id))
				}
				if s.Tag < 0 { // the executor refuses it (exec.Machine)
					return verr("structure", "%s: negative tag %d", describe(p, r, id), s.Tag)
				}
			}
			if reads {
				if err := checkAccess(p, r, id, "reads", s.SrcBuf, s.SrcOff, s.Len, z); err != nil {
					return err
				}
			}
			if writes {
				if s.DstBuf == BufSrc {
					return verr("bounds", "%s: writes the src buffer, which is the caller's read-only input", describe(p, r, id))
				}
				if err := checkAccess(p, r, id, "writes", s.DstBuf, s.DstOff, s.Len, z); err != nil {
					return err
				}
			}
			if reads && writes && s.SrcBuf == s.DstBuf && s.Len > 0 &&
				s.SrcOff < s.DstOff+s.Len && s.DstOff < s.SrcOff+s.Len {
				return verr("bounds", "%s: source and destination overlap", describe(p, r, id))
			}
			for _, d := range rp.Deps(id) {
				if d < 0 || int(d) >= id {
					return verr("structure", "%s: depends on step %d, which is not an earlier step", describe(p, r, id), d)
				}
			}
		}
	}
	return nil
}

func checkAccess(p *Plan, r, id int, verb string, b Buf, off, n int64, z Sizes) error {
	if b < BufSrc || b > BufScratch {
		return verr("structure", "rank %d step %d: unknown buffer %s", r, id, b)
	}
	if off < 0 {
		return verr("bounds", "%s: negative offset", describe(p, r, id))
	}
	if size := z.Of(b); n > size || off > size-n {
		return verr("bounds", "%s: %s [%d,%d) outside %s buffer of %d bytes", describe(p, r, id), verb, off, off+n, b, size)
	}
	return nil
}

// verifier holds the flattened plan: global step g = base[r] + id.
type verifier struct {
	p       *Plan
	base    []int   // first global id of each rank
	rankOf  []int32 // rank of each global step
	partner []int32 // global id of the matched step, -1 for local ops
	// prevSame and nextSame link the sends (recvs) of one rank with the
	// same peer and tag in step order, -1 at the ends (verify_match.go).
	prevSame []int32
	nextSame []int32
	order    []int32    // completion order of the rendezvous simulation
	critAll  []int32    // longest transfer chain ending at each step
	critInt  []int32    // longest inter-node transfer chain ending at each step
	level    []int32    // as-soon-as-possible round of each step (Levels)
	singles  []*rankSet // {r} for every rank, shared by all contents
	all      *rankSet   // every rank
	// rowPrefix[i] are the prefix sums of alltoallv Counts[i] (send
	// displacements of rank i), built on first use.
	rowPrefix [][]int64
	total     int
}

func newVerifier(p *Plan) *verifier {
	v := &verifier{p: p, base: make([]int, len(p.Ranks)+1)}
	for r := range p.Ranks {
		v.base[r+1] = v.base[r] + len(p.Ranks[r].Steps)
	}
	v.total = v.base[len(p.Ranks)]
	v.rankOf = make([]int32, v.total)
	for r := range p.Ranks {
		for g := v.base[r]; g < v.base[r+1]; g++ {
			v.rankOf[g] = int32(r)
		}
	}
	return v
}

func (v *verifier) step(g int32) (*Step, int, int) {
	r := int(v.rankOf[g])
	id := int(g) - v.base[r]
	return &v.p.Ranks[r].Steps[id], r, id
}

// run simulates the programs with rendezvous transfers: a step is posted
// when its deps completed and, for a send (recv), once the previous send
// (recv) of its rank with the same peer and tag is posted, the order the
// executor posts them in (package exec, "What a step waits for"); a copy
// or reduce completes when posted; a send and its recv complete together
// once both are posted. It records the
// completion order (a linearisation of the plan's happens-before order that
// the content simulation replays) and the critical-path depths.
func (v *verifier) run() error {
	p := v.p
	n := v.total
	indeg := make([]int32, n)
	succOff := make([]int32, n+1)
	for r := range p.Ranks {
		rp := &p.Ranks[r]
		for id := range rp.Steps {
			g := v.base[r] + id
			indeg[g] = int32(len(rp.Deps(id)))
			for _, d := range rp.Deps(id) {
				succOff[v.base[r]+int(d)+1]++
			}
		}
	}
	for i := 0; i < n; i++ {
		succOff[i+1] += succOff[i]
	}
	succ := make([]int32, succOff[n])
	fill := append([]int32(nil), succOff[:n]...)
	for r := range p.Ranks {
		rp := &p.Ranks[r]
		for id := range rp.Steps {
			for _, d := range rp.Deps(id) {
				dg := v.base[r] + int(d)
				succ[fill[dg]] = int32(v.base[r] + id)
				fill[dg]++
			}
		}
	}
	v.critAll = make([]int32, n)
	v.critInt = make([]int32, n)
	v.level = make([]int32, n)
	posted := make([]bool, n)
	held := make([]bool, n) // deps done, waiting for the same-tag step before it
	done := make([]bool, n)
	v.order = make([]int32, 0, n)
	var stack []int32
	for g := 0; g < n; g++ {
		if indeg[g] == 0 {
			stack = append(stack, int32(g))
		}
	}
	depth := func(g int32) (int32, int32, int32) {
		_, r, id := v.step(g)
		var a, b, l int32
		for _, d := range p.Ranks[r].Deps(id) {
			dg := v.base[r] + int(d)
			a = max(a, v.critAll[dg])
			b = max(b, v.critInt[dg])
			l = max(l, v.level[dg]+1)
		}
		return a, b, l
	}
	complete := func(g int32, a, b, l int32) {
		done[g] = true
		v.critAll[g], v.critInt[g], v.level[g] = a, b, l
		v.order = append(v.order, g)
		for _, s := range succ[succOff[g]:succOff[g+1]] {
			indeg[s]--
			if indeg[s] == 0 {
				stack = append(stack, s)
			}
		}
	}
	for len(stack) > 0 {
		g := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s, r, _ := v.step(g)
		if s.Op == OpCopy || s.Op == OpReduce {
			a, b, l := depth(g)
			complete(g, a, b, l)
			continue
		}
		if pv := v.prevSame[g]; pv >= 0 && !posted[pv] {
			held[g] = true
			continue
		}
		posted[g] = true
		if nx := v.nextSame[g]; nx >= 0 && held[nx] {
			held[nx] = false
			stack = append(stack, nx)
		}
		m := v.partner[g]
		if !posted[m] {
			continue
		}
		a1, b1, l1 := depth(g)
		a2, b2, l2 := depth(m)
		a, b, l := max(a1, a2)+1, max(b1, b2), max(l1, l2)
		if p.Ranks[r].Node != p.Ranks[s.Peer].Node {
			b++
		}
		send, recv := g, m
		if s.Op == OpRecv {
			send, recv = m, g
		}
		complete(send, a, b, l)
		complete(recv, a, b, l)
	}
	if len(v.order) == n {
		return nil
	}
	return v.deadlock(posted, held, done)
}

func (v *verifier) deadlock(posted, held, done []bool) error {
	p := v.p
	var parts []string
	stuckRanks := 0
	for r := range p.Ranks {
		var waiting []string
		firstBlocked, firstHeld := -1, -1
		for id := range p.Ranks[r].Steps {
			g := v.base[r] + id
			if done[g] {
				continue
			}
			if posted[g] {
				_, pr, pid := v.step(v.partner[g])
				waiting = append(waiting, fmt.Sprintf("step %d (%s %d tag %d) waits for rank %d step %d",
					id, map[StepOp]string{OpSend: "send to", OpRecv: "recv from"}[p.Ranks[r].Steps[id].Op],
					p.Ranks[r].Steps[id].Peer, p.Ranks[r].Steps[id].Tag, pr, pid))
			} else if held[g] && firstHeld < 0 {
				firstHeld = id
			} else if !held[g] && firstBlocked < 0 {
				firstBlocked = id
			}
		}
		if len(waiting) == 0 && firstBlocked < 0 && firstHeld < 0 {
			continue
		}
		stuckRanks++
		if len(parts) >= 8 {
			continue
		}
		if len(waiting) > 3 {
			waiting = append(waiting[:3], fmt.Sprintf("%d more", len(waiting)-3))
		}
		if firstHeld >= 0 && len(waiting) < 4 {
			_, _, pid := v.step(v.prevSame[v.base[r]+firstHeld])
			waiting = append(waiting, fmt.Sprintf("step %d waits for step %d (same peer and tag) to be posted", firstHeld, pid))
		}
		if len(waiting) == 0 {
			waiting = append(waiting, fmt.Sprintf("step %d waits for deps %v", firstBlocked, p.Ranks[r].Deps(firstBlocked)))
		}
		parts = append(parts, fmt.Sprintf("rank %d: %s", r, strings.Join(waiting, ", ")))
	}
	return verr("deadlock", "%d of %d steps never complete under rendezvous semantics; %d rank(s) stuck: %s",
		v.total-len(v.order), v.total, stuckRanks, strings.Join(parts, "; "))
}

func (v *verifier) report() *Report {
	p := v.p
	n := len(p.Ranks)
	rep := &Report{
		Collective:   p.Collective,
		Algorithm:    p.Algorithm,
		NRanks:       n,
		Steps:        v.total,
		StepsPerRank: make([]int, n),
		SendsPerRank: make([]int, n),
		SentBytes:    make([]int64, n),
		RecvBytes:    make([]int64, n),
	}
	for r := range p.Ranks {
		rp := &p.Ranks[r]
		rep.StepsPerRank[r] = len(rp.Steps)
		rep.MaxSteps = max(rep.MaxSteps, len(rp.Steps))
		rep.MaxScratchBytes = max(rep.MaxScratchBytes, rp.Sizes.Scratch)
		for id := range rp.Steps {
			s := &rp.Steps[id]
			switch s.Op {
			case OpSend:
				rep.SendsPerRank[r]++
				rep.SentBytes[r] += s.Len
				rep.Transfers++
				rep.BytesMoved += s.Len
				if rp.Node != p.Ranks[s.Peer].Node {
					rep.InterNodeTransfers++
					rep.InterNodeBytes += s.Len
				}
			case OpRecv:
				rep.RecvBytes[r] += s.Len
			}
		}
	}
	for g := 0; g < v.total; g++ {
		rep.CriticalTransfers = max(rep.CriticalTransfers, int(v.critAll[g]))
		rep.CriticalInterNode = max(rep.CriticalInterNode, int(v.critInt[g]))
	}
	return rep
}
