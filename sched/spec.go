package sched

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// Spec is everything a generator needs to build a plan. Every rank builds
// the same plan from the same Spec, so plans need no communication.
type Spec struct {
	Collective coll.Collective
	Algorithm  string // a registered name, or "auto"
	// Intra selects the intra-node phase of parallel_rings ("" = auto).
	Intra string
	Topo  *topo.Topology
	// Bytes follows UCC's meaning per collective (see package coll).
	Bytes      int64
	DtypeBytes int
	// Chunks > 1 splits long transfers into that many pipelined pieces.
	Chunks int
	// Counts is the alltoallv byte matrix (Counts[i][j]: bytes i sends j).
	Counts [][]int64
	// Root is the root rank of bcast.
	Root int
}

// NRanks is the number of ranks of the spec's topology.
func (s *Spec) NRanks() int { return s.Topo.NumGPUs() }

// Algorithm is one entry of the generator table, in the manner of UCC's
// {id, name, desc} tables.
type Algorithm struct {
	Collective coll.Collective
	Name       string
	Desc       string
	// Paper names the section the generator implements ("Parallel Rings Alg. 1").
	Paper string
	// Intra says the algorithm has an intra-node phase that Spec.Intra
	// selects (intra.go). When the spec leaves the choice to "auto", a plan
	// built whole notes what auto chose for the topology.
	Intra bool
	// Generate fills plan.Ranks for spec. It returns an *UnsupportedError
	// when the algorithm cannot serve the spec.
	Generate func(spec *Spec, plan *Plan) error
	// Rank, when set, builds the program of one rank only (prog is
	// plan.Ranks[prog.Rank], with Rank, Node and Local filled), so a real
	// rank need not build everyone's program; see GenerateRank. It must
	// return the same UnsupportedError on every rank.
	Rank func(spec *Spec, plan *Plan, prog *RankProgram) error
}

// UnsupportedError says why an algorithm cannot serve a spec (ranks that do
// not split into equal nodes, a message that does not split into whole
// elements, ...). "auto" selection skips such algorithms.
type UnsupportedError struct {
	Algorithm string
	Reason    string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("algorithm %s: %s", e.Algorithm, e.Reason)
}

// Unsupported builds an *UnsupportedError.
func Unsupported(alg, format string, args ...any) error {
	return &UnsupportedError{Algorithm: alg, Reason: fmt.Sprintf(format, args...)}
}

// IsUnsupported reports whether err says an algorithm cannot serve a spec.
func IsUnsupported(err error) bool {
	var u *UnsupportedError
	return errors.As(err, &u)
}

var registry = map[coll.Collective][]Algorithm{}

// Register adds an algorithm to the table. Generators register in init.
func Register(a Algorithm) {
	for _, b := range registry[a.Collective] {
		if b.Name == a.Name {
			panic("sched: algorithm registered twice: " + string(a.Collective) + "/" + a.Name)
		}
	}
	registry[a.Collective] = append(registry[a.Collective], a)
	sort.Slice(registry[a.Collective], func(i, j int) bool {
		return registry[a.Collective][i].Name < registry[a.Collective][j].Name
	})
}

// Algorithms lists the algorithms registered for c, sorted by name.
func Algorithms(c coll.Collective) []Algorithm {
	return append([]Algorithm(nil), registry[c]...)
}

// Lookup finds the algorithm named name for c.
func Lookup(c coll.Collective, name string) (Algorithm, error) {
	var names []string
	for _, a := range registry[c] {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	if len(names) == 0 {
		return Algorithm{}, fmt.Errorf("no algorithms for collective %q", c)
	}
	return Algorithm{}, fmt.Errorf("unknown %s algorithm %q (known: %s)", c, name, strings.Join(names, ", "))
}
