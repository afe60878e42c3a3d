package sched

import (
	"fmt"
	"sort"
	"strings"

	"github.com/goring-hpc/goring/coll"
)

// The algorithm table: every generator registers one entry in init,
// through the register function that fits how it builds programs: one
// rank at a time (registerPerRank), one rank at a time into exact-size
// storage (registerHier), or from a plan of the whole collective
// (registerWholePlan).

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

// AlgorithmNames are the names of the algorithms registered for c,
// sorted: what "all" means wherever a command takes --alg.
func AlgorithmNames(c coll.Collective) []string {
	var names []string
	for _, a := range registry[c] {
		names = append(names, a.Name)
	}
	return names
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

// perRank turns a one-rank generator into a whole-plan generator.
func perRank(fn func(*Spec, *Plan, *RankProgram) error) func(*Spec, *Plan) error {
	return func(spec *Spec, plan *Plan) error {
		for r := range plan.Ranks {
			if err := fn(spec, plan, &plan.Ranks[r]); err != nil {
				return err
			}
		}
		return nil
	}
}

// registerPerRank registers an algorithm written one rank at a time.
func registerPerRank(a Algorithm) {
	a.Generate = perRank(a.Rank)
	Register(a)
}

// registerWholePlan registers an algorithm that plans the whole collective
// before it emits any program (a relay tree, a multi-path split): build
// emits every rank's program when only < 0, else rank only's from the same
// plan, so GenerateRank pays for the planning but not for the other ranks'
// steps.
func registerWholePlan(a Algorithm, build func(spec *Spec, plan *Plan, only int) error) {
	a.Generate = func(spec *Spec, plan *Plan) error { return build(spec, plan, -1) }
	a.Rank = func(spec *Spec, plan *Plan, prog *RankProgram) error { return build(spec, plan, prog.Rank) }
	Register(a)
}

// registerHier registers a hierarchical algorithm written one rank at a
// time. Its whole-plan generator builds each rank into one reused program
// and copies the result into slices of the exact size, so a large plan
// holds no spare capacity and no step is allocated on its own.
func registerHier(a Algorithm) {
	rank := a.Rank
	a.Generate = func(spec *Spec, plan *Plan) error {
		var work RankProgram
		for r := range plan.Ranks {
			prog := &plan.Ranks[r]
			resetProgram(&work, prog)
			if err := rank(spec, plan, &work); err != nil {
				return err
			}
			prog.Sizes = work.Sizes
			prog.Steps = append(make([]Step, 0, len(work.Steps)), work.Steps...)
			prog.deps = append(make([]int32, 0, len(work.deps)), work.deps...)
		}
		if a.Intra && (spec.Intra == "" || spec.Intra == "auto") {
			plan.Note = "intra: auto chose " + AutoIntra(spec.Topo)
		}
		return nil
	}
	Register(a)
}

// resetProgram makes work an empty program of the rank of like, keeping
// work's storage.
func resetProgram(work, like *RankProgram) {
	work.Rank, work.Node, work.Local = like.Rank, like.Node, like.Local
	work.Sizes = Sizes{}
	work.Steps = work.Steps[:0]
	work.deps = work.deps[:0]
}
