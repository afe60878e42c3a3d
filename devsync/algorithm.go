package devsync

import "fmt"

// Algorithm is one of the device-driven collectives of a node.
type Algorithm int

const (
	// OneShotAllreduce: every rank stages its input, then reads every
	// peer's whole input and reduces it in rank order. One signal round;
	// n times the data read per rank, so it suits small messages.
	OneShotAllreduce Algorithm = iota
	// TwoShotAllreduce: a reduce-scatter by stores (every rank stores
	// its piece of chunk r into rank r's slot; rank r reduces them in rank
	// order), then an allgather by loads of the reduced chunks. Two signal
	// rounds; each rank moves about twice its data.
	TwoShotAllreduce
	// ReduceScatter by stores: every rank stores its block r into rank
	// r's slot; rank r reduces them, in rank order.
	ReduceScatter
	// Allgather by stores: every rank stores its input into block r of
	// every rank's slot, then copies its slot out.
	Allgather
	// Bcast by stores: the root stores its input into every rank's slot.
	Bcast
	// LLOneShotAllreduce, LLReduceScatter and LLAllgather move the same
	// data as OneShotAllreduce, ReduceScatter and Allgather in tagged
	// lines (ll.go): no flags, no fences, one crossing of NVLink before a
	// reader can use a byte. They suit small calls.
	LLOneShotAllreduce
	LLReduceScatter
	LLAllgather
)

// Algorithms lists every algorithm in a stable order.
var Algorithms = []Algorithm{OneShotAllreduce, TwoShotAllreduce, ReduceScatter, Allgather, Bcast,
	LLOneShotAllreduce, LLReduceScatter, LLAllgather}

var algorithmNames = [...]string{"oneshot_allreduce", "twoshot_allreduce", "reduce_scatter", "allgather", "bcast",
	"ll_oneshot_allreduce", "ll_reduce_scatter", "ll_allgather"}

func (a Algorithm) String() string {
	if a >= 0 && int(a) < len(algorithmNames) {
		return algorithmNames[a]
	}
	return fmt.Sprintf("algorithm(%d)", int(a))
}

// Reduces reports whether the algorithm combines values (needs an op).
func (a Algorithm) Reduces() bool {
	b := a.Base()
	return b == OneShotAllreduce || b == TwoShotAllreduce || b == ReduceScatter
}

// LL reports whether the algorithm moves its data in tagged lines (ll.go).
func (a Algorithm) LL() bool { return a >= LLOneShotAllreduce && a <= LLAllgather }

// Base is the algorithm of flags and slots that an LL algorithm computes
// the same result as (its buffers, counts and reference); a itself
// otherwise.
func (a Algorithm) Base() Algorithm {
	switch a {
	case LLOneShotAllreduce:
		return OneShotAllreduce
	case LLReduceScatter:
		return ReduceScatter
	case LLAllgather:
		return Allgather
	}
	return a
}

// Shape is one call: the algorithm, the team and grid, and the counts.
// Count is in elements of ElemSize bytes: the whole vector of an
// allreduce or bcast, each rank's output block of a reduce_scatter (its
// input is Ranks*Count), each rank's input block of an allgather (its
// output is Ranks*Count).
type Shape struct {
	Alg      Algorithm
	Ranks    int
	Blocks   int
	Count    int
	ElemSize int
	Root     int // bcast only
	// Stride is a reduce_scatter's distance in elements between its input
	// blocks (0: Count, blocks back to back): a piece of a larger
	// reduce_scatter reads the same range of every block of the whole
	// call's input.
	Stride int
}

// BlockStride is the distance between a reduce_scatter's input blocks.
func (s Shape) BlockStride() int {
	if s.Stride == 0 {
		return s.Count
	}
	return s.Stride
}

// Validate checks the shape against the protocol's limits.
func (s Shape) Validate() error {
	switch {
	case s.Alg < 0 || int(s.Alg) >= len(algorithmNames):
		return fmt.Errorf("devsync: unknown algorithm %d", int(s.Alg))
	case s.Ranks < 1 || s.Ranks > MaxRanks:
		return fmt.Errorf("devsync: %d ranks: 1 to %d", s.Ranks, MaxRanks)
	case s.Blocks < 1 || s.Blocks > MaxBlocks:
		return fmt.Errorf("devsync: %d blocks: 1 to %d", s.Blocks, MaxBlocks)
	case s.Count < 0:
		return fmt.Errorf("devsync: count %d", s.Count)
	case s.ElemSize != 1 && s.ElemSize != 2 && s.ElemSize != 4 && s.ElemSize != 8:
		return fmt.Errorf("devsync: element size %d: 1, 2, 4 or 8", s.ElemSize)
	case s.Alg == Bcast && (s.Root < 0 || s.Root >= s.Ranks):
		return fmt.Errorf("devsync: root %d of %d ranks", s.Root, s.Ranks)
	case s.Stride != 0 && (s.Alg.Base() != ReduceScatter || s.Stride < s.Count):
		return fmt.Errorf("devsync: stride %d for %v of %d elements (reduce_scatter only, at least the count)", s.Stride, s.Alg, s.Count)
	case s.Alg.LL():
		return s.llValidate()
	}
	return nil
}

// InElems is the elements of each rank's input.
func (s Shape) InElems() int {
	if s.Alg.Base() == ReduceScatter {
		return (s.Ranks-1)*s.BlockStride() + s.Count
	}
	return s.Count
}

// OutElems is the elements of each rank's output.
func (s Shape) OutElems() int {
	if s.Alg.Base() == Allgather {
		return s.Ranks * s.Count
	}
	return s.Count
}

// SlotElems is the elements one data slot holds: a block per rank for
// reduce_scatter and allgather, one region of ChunkStride per rank for a
// two-shot allreduce (plan_allreduce_twoshot.go), none for the LL
// algorithms (their lines go to the LL area: ll.go), the vector otherwise.
func (s Shape) SlotElems() int {
	if s.Alg.LL() {
		return 0
	}
	switch s.Alg {
	case TwoShotAllreduce:
		return s.Ranks * ChunkStride(s.Count, s.Ranks, VecElems(s.ElemSize))
	case ReduceScatter, Allgather:
		return s.Ranks * s.Count
	}
	return s.Count
}

// SlotBytes is one data slot's size in bytes, rounded to Align.
func (s Shape) SlotBytes() int { return SlotBytes(s.SlotElems() * s.ElemSize) }
