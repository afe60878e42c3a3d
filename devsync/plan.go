package devsync

import "fmt"

// Space says which memory a Region is in.
type Space int

const (
	Input  Space = iota // the rank's own input buffer (never read by peers)
	Output              // the rank's own output buffer (never read by peers)
	Slot                // a rank's data slot of this call's parity (Region.Rank says whose)
	// LL: a rank's LL area of this call's parity (Region.Rank says whose;
	// ll.go), its payload: rank p's region starts at element
	// p*LLRegionBytes/ElemSize. A Move that stores there stores tagged
	// lines; a Move that reads there first waits until every line of the
	// region holds the call's tag.
	LL
)

func (s Space) String() string {
	return [...]string{"input", "output", "slot", "ll"}[s]
}

// Region is Len elements at element offset Off of a space; Rank names
// whose slot (for Input and Output it is the planning rank itself).
type Region struct {
	Space    Space
	Rank     int
	Off, Len int
}

func (r Region) String() string {
	return fmt.Sprintf("%s(rank %d)[%d:+%d]", r.Space, r.Rank, r.Off, r.Len)
}

// Kind is what a step does.
type Kind int

const (
	// Signal: release at system scope, then store the call's epoch into
	// flag word (Phase, block, me) of every rank in Peers.
	Signal Kind = iota
	// Wait: acquire, for every rank q in Peers, this rank's flag word
	// (Phase, block, q) until it holds the call's epoch (or the abort
	// word is set).
	Wait
	// Move: read every region of Srcs, combine them element-wise with the
	// call's op in exactly the order given (rank 0 first: one fixed
	// order, so every rank's result has the same bits), and store the
	// result into every region of Dsts. One source is a copy.
	Move
)

// Step is one step of one rank's block.
type Step struct {
	Kind  Kind
	Phase int   // Signal, Wait
	Peers []int // Signal, Wait
	Srcs  []Region
	Dsts  []Region
}

// Plan is the steps block (0..Blocks-1) of rank runs for one call of s,
// in order. Every rank's block b runs its own plan; plans of different
// blocks touch disjoint elements.
func Plan(s Shape, rank, block int) ([]Step, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if rank < 0 || rank >= s.Ranks || block < 0 || block >= s.Blocks {
		return nil, fmt.Errorf("devsync: rank %d block %d of %d ranks and %d blocks", rank, block, s.Ranks, s.Blocks)
	}
	p := planner{s: s, me: rank, block: block, vec: VecElems(s.ElemSize)}
	switch s.Alg {
	case OneShotAllreduce:
		return p.oneShotAllreduce(), nil
	case TwoShotAllreduce:
		return p.twoShotAllreduce(), nil
	case ReduceScatter:
		return p.reduceScatter(), nil
	case Allgather:
		return p.allgather(), nil
	case LLOneShotAllreduce:
		return p.llOneShotAllreduce(), nil
	case LLReduceScatter:
		return p.llReduceScatter(), nil
	case LLAllgather:
		return p.llAllgather(), nil
	}
	return p.bcast(), nil
}

// planner holds what every algorithm's plan needs.
type planner struct {
	s         Shape
	me, block int
	vec       int // elements per vector load
}

// part is this block's piece of the count elements at off.
func (p planner) part(off, count int) (int, int) {
	o, n := Part(count, p.s.Blocks, p.block, p.vec)
	return off + o, n
}

// others is every rank but this one, in rank order.
func (p planner) others() []int {
	var r []int
	for q := range p.s.Ranks {
		if q != p.me {
			r = append(r, q)
		}
	}
	return r
}

// slotsInRankOrder is the same region of every rank's slot, rank 0 first:
// the sources of a reduction in its one fixed order.
func (p planner) slotsInRankOrder(off, n int) []Region {
	r := make([]Region, p.s.Ranks)
	for q := range r {
		r[q] = Region{Slot, q, off, n}
	}
	return r
}

// llRegion is the region of owner's LL area that rank src's lines of
// elements [off, off+n) of its payload go to.
func (p planner) llRegion(owner, src, off, n int) Region {
	return Region{LL, owner, src*p.s.LLRegionBytes()/p.s.ElemSize + off, n}
}

func (p planner) signal(phase int, peers []int) Step {
	return Step{Kind: Signal, Phase: phase, Peers: peers}
}
func (p planner) wait(phase int, peers []int) Step {
	return Step{Kind: Wait, Phase: phase, Peers: peers}
}
func (p planner) move(srcs []Region, dsts ...Region) Step {
	return Step{Kind: Move, Srcs: srcs, Dsts: dsts}
}
