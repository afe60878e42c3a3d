package cpumodel

import (
	"fmt"

	"github.com/goring-hpc/goring/devsync"
)

// Mutation is a bug the model can inject.
type Mutation int

const (
	// None runs the protocol as designed.
	None Mutation = iota
	// NoFence: Signal stores its flags without releasing the stores
	// before them, so a flag can become visible before the data.
	NoFence
	// ReuseEpoch: every call gets the first call's epoch, so flags left by
	// the previous call release this call's waits.
	ReuseEpoch
	// SkipWait: waits pass at once, so a rank reads slots that may not
	// be written yet.
	SkipWait
	// OwnRankFirst: a reduction starts from the reducing rank's own slot
	// (r, r+1, ..., r-1) instead of rank 0's.
	OwnRankFirst
	// EarlyDone: a block stores its done word without releasing its
	// stores first, so the host can see a call end before its output is
	// all there.
	EarlyDone
)

var mutationNames = [...]string{"none", "no_fence", "reuse_epoch", "skip_wait", "own_rank_first", "early_done"}

func (m Mutation) String() string { return mutationNames[m] }

// Mutations lists the bugs, without None.
var Mutations = []Mutation{NoFence, ReuseEpoch, SkipWait, OwnRankFirst, EarlyDone}

// Config is one run: Calls calls of Shape back to back, or, where Shapes
// is set, call c of Shapes[c] (a team's calls of different algorithms,
// counts and grids on the same slots: a piece of a large call is one such
// call too). Every shape has the same Ranks.
type Config struct {
	Shape  devsync.Shape
	Shapes []devsync.Shape
	// Reduce combines src into dst element-wise (exec/reduce's kernels
	// fit); required by the algorithms that reduce.
	Reduce   func(dst, src []byte)
	Calls    int
	Seed     uint64
	Mutation Mutation
	// Dead, when not -1, is a rank that stops before its call DeadAtCall
	// (0-based); the model's host then sets the abort word once no other
	// agent can move.
	Dead, DeadAtCall int
	// DrainChance is the chance that the scheduler drains a buffered store
	// rather than runs a step (0 takes 0.1).
	DrainChance float64
}

// shape is the shape of call.
func (c Config) shape(call int) devsync.Shape {
	if c.Shapes != nil {
		return c.Shapes[call]
	}
	return c.Shape
}

func (c Config) validate(inputs [][][]byte) error {
	if c.Shapes != nil && len(c.Shapes) != c.Calls {
		return fmt.Errorf("cpumodel: %d shapes for %d calls", len(c.Shapes), c.Calls)
	}
	if len(inputs) != c.Calls {
		return fmt.Errorf("cpumodel: %d calls of inputs for %d calls", len(inputs), c.Calls)
	}
	for call, ins := range inputs {
		s := c.shape(call)
		if err := s.Validate(); err != nil {
			return err
		}
		if s.Ranks != c.shape(0).Ranks {
			return fmt.Errorf("cpumodel: call %d has %d ranks, call 0 %d", call, s.Ranks, c.shape(0).Ranks)
		}
		if s.Alg.Reduces() && c.Reduce == nil {
			return fmt.Errorf("cpumodel: %v needs Reduce", s.Alg)
		}
		want := s.InElems() * s.ElemSize
		if len(ins) != s.Ranks {
			return fmt.Errorf("cpumodel: call %d has %d inputs for %d ranks", call, len(ins), s.Ranks)
		}
		for r, in := range ins {
			if len(in) != want {
				return fmt.Errorf("cpumodel: call %d rank %d input is %d bytes, not %d", call, r, len(in), want)
			}
		}
	}
	return nil
}
