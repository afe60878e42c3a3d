package choose

import (
	"fmt"
	"sync"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/model"
)

// Shape is what the choice knows of a call and its team.
type Shape struct {
	Coll  coll.Collective
	Bytes int64 // the call's vector (per rank for allgather)
	Host  bool  // the buffers are host memory (else CUDA memory)
	Size  int   // ranks
	// Nodes is how many hosts the ranks span (0 counts as one).
	Nodes int
	// GPUs is how many GPUs the ranks' host has (0: not known).
	GPUs int
	// Push: goring's CUDA push engine carries every device transfer
	// (every rank on one host, the engine on). SharedGPU: every rank's
	// process sees one and the same GPU.
	Push, SharedGPU bool
}

// Choice is what goring runs for a shape.
type Choice struct {
	Alg string
	// Fallback runs where Alg cannot serve the shape ("" for none).
	Fallback string
	// Chunks is the pieces each transfer pipelines in (0: whole).
	Chunks int
	// OverNode: the messages run even where the node kernels could
	// (Row.OverNode).
	OverNode bool
	// Why says where the choice comes from: the table's row, or the model.
	Why string
}

func (s Shape) oneHost() bool { return s.Nodes <= 1 }

// matches reports whether r applies to s.
func (r Row) matches(s Shape) bool {
	switch {
	case r.Coll != s.Coll,
		r.Mem == Host && !s.Host,
		r.Mem == Device && s.Host,
		r.OneHost && !s.oneHost(),
		r.MinBytes > 0 && s.Bytes < r.MinBytes,
		r.MaxBytes > 0 && s.Bytes > r.MaxBytes,
		r.Push && !s.Push,
		r.Pair && s.Size != 2,
		r.Spread && (s.Size <= 2 || s.GPUs < s.Size),
		r.Leader && !(s.Push && s.SharedGPU && s.Size > 1 && direct.Serves(s.Coll, s.Size)):
		return false
	}
	return true
}

// Measured is the table's choice for s: its first matching row, with the
// last matching row's algorithm as the fallback where it differs; false
// where no row matches s.
func Measured(s Shape) (Choice, bool) {
	first, last := -1, -1
	for i, r := range Table {
		if r.matches(s) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return Choice{}, false
	}
	ch := Choice{Alg: Table[first].Alg, Chunks: Table[first].Chunks, OverNode: Table[first].OverNode, Why: rowWhy(first)}
	if fb := Table[last].Alg; fb != ch.Alg {
		ch.Fallback = fb
	}
	return ch, true
}

// rowWhy is a choice's Why for Table's row i, made once per row: the team
// layer asks for a choice on every call, and a formatted string per call
// was most of its cost.
func rowWhy(i int) string {
	whyOnce.Do(func() {
		whys = make([]string, len(Table))
		for k := range Table {
			whys[k] = fmt.Sprintf("by choose.Table row %d (measured)", k)
		}
	})
	return whys[i]
}

var (
	whyOnce sync.Once
	whys    []string
)

// Auto is what goring runs for s: the table's choice where it has one,
// else the cheapest algorithm of costs (the model on s's topology, Costs)
// at s.Bytes. Where the caller gives no model (nil: no topology, or a team
// too large to simulate while a call waits, ModelMaxRanks), a shape no
// row covers runs the collective's Base.
func Auto(s Shape, costs *model.CostTable) (Choice, error) {
	if ch, ok := Measured(s); ok {
		return ch, nil
	}
	if costs == nil {
		if b := Base(s.Coll); b != "" {
			return Choice{Alg: b, Why: "by the base row (no row for the shape, no model given)"}, nil
		}
		return Choice{}, fmt.Errorf("choose: goring runs no %s", s.Coll)
	}
	alg, _, err := costs.Best(s.Bytes)
	if err != nil {
		return Choice{}, fmt.Errorf("choose: %w", err)
	}
	return Choice{Alg: alg, Why: "by the model (cheapest in the simulator's cost table)"}, nil
}

// ModelMaxRanks bounds the teams whose calls ask the model while a call
// waits (the team layer's device calls across hosts): one size class costs
// a simulation of every algorithm, 3-5 ms at 8 ranks and 26-35 ms at 32
// and 64 on the development machine, growing faster than the ranks.
const ModelMaxRanks = 64

// Base is the algorithm the table runs for c on host memory where no
// narrower row applies: its last host row ("" where goring has none),
// valid for any rank count.
func Base(c coll.Collective) string {
	alg := ""
	for _, r := range Table {
		if r.Coll == c && r.Mem != Device && r.MinBytes == 0 && r.MaxBytes == 0 {
			alg = r.Alg
		}
	}
	return alg
}
