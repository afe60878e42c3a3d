package team

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
)

// MoE dispatch and combine in the team layer (docs/contracts.md "Dispatch
// and combine" and "MoE dispatch and combine from C"). UCC has no such
// collective, so they reach the team through goring.h's goring_moe_init,
// not through UCC; once made, a call is a Coll like any other: posted,
// tested and finalised with the team's other collectives, in post order.
//
// Every rank holds the whole routing, so no counts are exchanged: each
// rank plans the same legs from it (sched/moe_legs.go) and runs its
// program on one Machine. Before a call's first post moves a row, the
// ranks allgather a hash of what they were given (8 bytes a rank, once
// per call, however often it is reposted) and fail alike where they
// differ, rather than run different plans against each other. The algorithms are sched's:
// multiwrite (MultiWrite section 3.2's same-index relay as section 6.3
// applies it to dispatch), unicast (the all-to-all-v baseline of
// MultiWrite section 6.3 and NIMBLE section V-D) and nimble (NIMBLE
// section V-D on the planner of section IV-B).

// The algorithm of a call that names none is choose.Table's, as for
// every collective (teamAlg, coll.go).

// MoEArgs are goring_moe_args_t in Go terms: one rank's dispatch or
// combine. Src and Dst are the caller's memory (C memory).
type MoEArgs struct {
	Coll coll.Collective // coll.Dispatch or coll.Combine
	// Routing is the layer's token traffic, the same on every rank.
	Routing *moe.Routing
	Src     unsafe.Pointer
	Dst     unsafe.Pointer
	// Dtype is the element type combine sums rows in (bfloat16 or
	// float32); dispatch moves bytes and ignores it.
	Dtype coll.Dtype
	Mem   MemArg
	Alg   string // "": the team's choice
	// Chunks is Args.Chunks: the transfers' pieces (0: the team's choice).
	Chunks int
}

// NewMoEColl checks one rank's dispatch or combine and makes its call
// (NewColl). Whatever the routing or the buffers get wrong is refused
// here, on the rank that got it wrong, before anything moves.
func NewMoEColl(t *Team, m MoEArgs) (*Coll, error) {
	a, err := m.args(t.rank, t.size)
	if err != nil {
		return nil, err
	}
	return NewColl(t, a)
}

// args checks m for rank of a team of n and turns it into Args.
func (m MoEArgs) args(rank, n int) (Args, error) {
	if !m.Coll.Routed() {
		return Args{}, Invalid("MoE call of collective %q: want dispatch or combine", m.Coll)
	}
	if err := CheckRouting(m.Routing, n); err != nil {
		return Args{}, err
	}
	a := Args{Coll: m.Coll, Src: m.Src, Dst: m.Dst, Mem: m.Mem, Alg: m.Alg, Routing: m.Routing, Chunks: m.Chunks}
	if m.Coll == coll.Dispatch {
		a.Dtype = coll.Uint8 // rows move as bytes, any token size
	} else {
		if !coll.CombineSums(m.Dtype) {
			return Args{}, NotSupported("combine sums rows in bfloat16 or float32, not %s", m.Dtype)
		}
		if m.Routing.TokenBytes%int64(m.Dtype.Size()) != 0 {
			return Args{}, Invalid("combine: %d-byte token rows are not a whole number of %s elements", m.Routing.TokenBytes, m.Dtype)
		}
		a.Dtype, a.Op = m.Dtype, coll.Sum
	}
	src, dst := moeBufferBytes(a, rank)
	if a.Src == nil && src > 0 {
		return Args{}, Invalid("%s: NULL src for %d bytes of rank %d", m.Coll, src, rank)
	}
	if a.Dst == nil && dst > 0 {
		return Args{}, Invalid("%s: NULL dst for %d bytes of rank %d", m.Coll, dst, rank)
	}
	return a, nil
}

// maxMoEBytes bounds every byte count a routing implies (a rank's rows
// of all tokens, each slot a row), far above any real layer, so the
// plans' int64 offsets cannot overflow.
const maxMoEBytes = 1 << 61

// CheckRouting checks a routing for a team of n ranks (moe's rules, and
// sizes the plans can address); its errors are invalid arguments.
func CheckRouting(r *moe.Routing, n int) error {
	if err := r.Validate(n); err != nil {
		return invalidErr{err}
	}
	slots := int64(len(r.Experts)) // every slot is a row somewhere
	if slots > 0 && r.TokenBytes > maxMoEBytes/slots {
		return Invalid("moe: %d slots of %d-byte rows overflow", slots, r.TokenBytes)
	}
	return nil
}

// MoERankLayout is what one rank of a routing receives in dispatch (and
// sends in combine): its expert side's rows (docs/contracts.md).
type MoERankLayout struct {
	// Rows is the rows of the rank's dispatch dst (combine src).
	Rows int64
	// ExpertRows[e] is the rows of expert e's group in them: the tokens
	// that picked e, if e lives on the rank, else 0. Groups follow in
	// ascending expert id.
	ExpertRows []int64
	// Slots[m] is the slot (token g's slot j: g*TopK+j, g global) whose
	// row is m: where an expert's rank finds each row's token and gate.
	Slots []int64
}

// MoELayout is rank's side of routing r on a team of n ranks, computed
// as every rank's plan computes it (moe.NewLayout).
func MoELayout(r *moe.Routing, rank, n int) (*MoERankLayout, error) {
	if err := CheckRouting(r, n); err != nil {
		return nil, err
	}
	if rank < 0 || rank >= n {
		return nil, Invalid("moe: rank %d of a team of %d", rank, n)
	}
	lay, err := moe.NewLayout(r)
	if err != nil {
		return nil, invalidErr{err}
	}
	l := &MoERankLayout{Rows: int64(lay.RecvRows[rank]), ExpertRows: make([]int64, len(r.Placement)),
		Slots: make([]int64, len(lay.SlotAt[rank]))}
	for m, s := range lay.SlotAt[rank] {
		l.Slots[m] = int64(s)
		l.ExpertRows[r.Experts[s]]++
	}
	return l, nil
}

// MoELayout is this rank's side of routing r on t.
func (t *Team) MoELayout(r *moe.Routing) (*MoERankLayout, error) { return MoELayout(r, t.rank, t.size) }

// moeBufferBytes are rank's src and dst bytes of a checked routed call:
// dispatch reads the rank's token rows and writes its expert rows,
// combine the other way.
func moeBufferBytes(a Args, rank int) (src, dst int64) {
	r := a.Routing
	own, rows := int64(r.Tokens[rank]), int64(0)
	for _, e := range r.Experts {
		if r.Placement[e] == rank {
			rows++
		}
	}
	if a.Coll == coll.Combine {
		own, rows = rows, own
	}
	return own * r.TokenBytes, rows * r.TokenBytes
}

// routedBytes is a routed call's row size, 0 when no rank owns a token
// (nothing moves: the call is trivial).
func routedBytes(a Args) (int64, error) {
	if a.Routing == nil {
		return 0, Invalid("%s: no routing", a.Coll)
	}
	if a.Routing.NumTokens() == 0 {
		return 0, nil
	}
	return a.Routing.TokenBytes, nil
}

// routedMemory refuses a routed call on device memory: the programs run
// on GPUs in goring bench, but not yet through the team layer.
func routedMemory(a Args, mem exec.Mem) error {
	if a.Coll.Routed() && !mem.IsHost() {
		return NotSupported("%s on device memory (not yet run through the team layer)", a.Coll)
	}
	return nil
}

// newMoERunner plans a dispatch or combine (its algorithm, else the
// fallback where the topology does not serve it) and builds its executor
// over the caller's buffers: the sched program on one Machine.
func newMoERunner(k *Call) (Runner, error) {
	c, a, mem := k.coll, k.Args, k.mem
	t := c.team
	entry, err := t.moePlan(a, k.alg, mem)
	if sched.IsUnsupported(err) && k.fallback != "" {
		entry, err = t.moePlan(a, k.fallback, mem)
	}
	switch {
	case err == nil:
	case sched.IsUnsupported(err):
		return nil, notSupportedErr{err}
	default:
		return nil, invalidErr{err}
	}
	c.alg, c.entry = entry.plan.Algorithm, entry
	prog := entry.program(t.rank)
	src, dst := moeBufferBytes(a, t.rank)
	if prog.Sizes.Src > src || prog.Sizes.Dst > dst {
		// The plan and the contract disagree: a bug, never a short write.
		return nil, Invalid("%s: plan %s wants %d/%d bytes of src/dst, the routing gives %d/%d",
			a.Coll, c.alg, prog.Sizes.Src, prog.Sizes.Dst, src, dst)
	}
	bufs := exec.Buffers{Src: c.view(mem, a.Src, src), Dst: c.view(mem, a.Dst, dst)}
	if err := c.alignForReduction(a, mem, &bufs); err != nil { // combine adds rows (aligned.go)
		return nil, err
	}
	m, err := c.build(entry, prog, bufs, a)
	if err != nil {
		return nil, err
	}
	// The routing check: an allgather of the call's hash before its
	// first post moves anything.
	x := &a2aExchange{mine: c.alloc(8), all: c.alloc(8 * int64(t.size))}
	binary.LittleEndian.PutUint64(x.mine, moeCallHash(a, c.alg))
	x.then = func() (*exec.Machine, error) { return m, moeAgree(a.Coll, x.all) }
	if err := c.exchangeMachine(x, 8); err != nil {
		return nil, err
	}
	return &machineRunner{c: c, xchg: x}, nil
}

// moeCallHash is what the ranks of a routed call must agree on: the
// collective, the routing, the algorithm that runs, the element type and
// the pieces a leg travels in (Chunks numbers the messages' tags, so
// ranks that cut the same legs differently never match, and wait). 0 and
// 1 are both whole legs (sched's moePlan.kmax).
func moeCallHash(a Args, alg string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(routingKey(a.Routing)))
	_, _ = fmt.Fprintf(h, "|%s|%s|%d|%d", a.Coll, alg, a.Dtype, max(a.Chunks, 1))
	return h.Sum64()
}

// moeAgree fails the call, on every rank alike (they all hold the same
// hashes), unless every rank hashed the same call: ranks with different
// routings would run different plans, and might deliver rows to the
// wrong places where the messages happen to match.
func moeAgree(c coll.Collective, all []byte) error {
	first := binary.LittleEndian.Uint64(all)
	for q := 1; q < len(all)/8; q++ {
		if binary.LittleEndian.Uint64(all[8*q:]) != first {
			return Invalid("%s: rank %d passed another routing, algorithm, datatype or chunks than rank 0; nothing moved", c, q)
		}
	}
	return nil
}

// moePlan finds or builds the plan of alg for a routed call, cached by
// its routing.
func (t *Team) moePlan(a Args, alg string, mem exec.Mem) (*planEntry, error) {
	r := a.Routing
	esize := a.Dtype.Size()
	spec := sched.Spec{Collective: a.Coll, Algorithm: alg, Topo: t.topo, Bytes: r.TokenBytes, DtypeBytes: esize, Routing: r, Chunks: a.Chunks}
	k := planKey{coll: string(a.Coll), alg: alg, bytes: r.TokenBytes, elem: esize, rank: t.rank, dtype: a.Dtype, op: a.Op,
		mem: mem, chunks: a.Chunks, layout: routingKey(r)}
	return t.plans.getKeyed(k, func() (*planEntry, error) {
		p, err := t.plans.generate(spec, t.rank)
		return &planEntry{plan: p}, err
	})
}

// routingKey encodes a routing for a plan's cache key: a framework
// repeats a layer's routing only by chance, but a benchmark or a test
// repeats it on purpose, and then pays no planning.
func routingKey(r *moe.Routing) string {
	b := make([]byte, 0, 8*(3+len(r.Tokens)+len(r.Placement))+4*len(r.Experts))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.TokenBytes))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.TopK))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(r.Tokens)))
	for _, x := range r.Tokens {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(r.Placement)))
	for _, x := range r.Placement {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	for _, e := range r.Experts {
		b = binary.LittleEndian.AppendUint32(b, uint32(e))
	}
	return string(b)
}
