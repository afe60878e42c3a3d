package sched

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goring-hpc/goring/coll"
)

// Generate turns a spec into the programs of every rank. It validates the
// spec, fills the plan header (collective, algorithm, topology name, ranks,
// bytes, dtype size, counts, root) and each program's Rank, Node and Local,
// then runs the algorithm's generator. Which algorithm goring runs where
// none is named ("auto") is package choose's to say, not sched's: a spec
// names one (GenerateFirst tries several in order).
//
// Generate is deterministic: every rank computes the same plan from the
// same spec. The plan is not verified here; call Verify (tests do, for every
// algorithm).
func Generate(spec Spec) (*Plan, error) {
	return generate(&spec, -1)
}

// GenerateRank builds only the program of rank: the returned plan has every
// RankProgram's Rank, Node and Local filled but steps and sizes only for
// Ranks[rank]. Algorithms with a per-rank generator (Algorithm.Rank: all
// baselines) cost O(that rank's steps); others are generated in full and
// the other ranks' steps dropped. A real rank of a job calls this.
func GenerateRank(spec Spec, rank int) (*Plan, error) {
	if spec.Topo != nil {
		if n := spec.Topo.NumGPUs(); rank < 0 || rank >= n {
			return nil, fmt.Errorf("rank %d out of range 0..%d", rank, n-1)
		}
	}
	return generate(&spec, rank)
}

func generate(spec *Spec, only int) (*Plan, error) {
	if err := validateSpec(spec); err != nil {
		return nil, err
	}
	a, err := Lookup(spec.Collective, spec.Algorithm)
	if err != nil {
		return nil, err
	}
	return runAlgorithm(a, spec, only)
}

// GenerateFirst is the plan of the first of names that serves spec (that
// does not return an *UnsupportedError; spec.Algorithm is ignored, and
// names not registered for the collective are passed over). Its
// Note says which it chose and why it skipped the ones before, then what
// the algorithm noted itself (e.g. its intra-node choice). Package
// choose's Generate gives it the choice and its fallback.
func GenerateFirst(spec Spec, names []string) (*Plan, error) {
	var skipped []string
	for _, name := range names {
		if _, err := Lookup(spec.Collective, name); err != nil {
			continue
		}
		spec.Algorithm = name
		plan, err := Generate(spec)
		if err == nil {
			note := "chose " + name
			if len(skipped) > 0 {
				note += " (skipped " + strings.Join(skipped, "; ") + ")"
			}
			if plan.Note != "" {
				note += "; " + plan.Note
			}
			plan.Note = note
			return plan, nil
		}
		var u *UnsupportedError
		if !errors.As(err, &u) {
			return nil, err
		}
		skipped = append(skipped, name+": "+u.Reason)
	}
	if len(skipped) == 0 {
		return nil, fmt.Errorf("no %s algorithm to try", spec.Collective)
	}
	return nil, fmt.Errorf("no %s algorithm serves this spec (%s)", spec.Collective, strings.Join(skipped, "; "))
}

func runAlgorithm(a Algorithm, spec *Spec, only int) (*Plan, error) {
	plan := newPlan(spec, a.Name)
	var err error
	switch {
	case a.Rank != nil && only >= 0:
		err = a.Rank(spec, plan, &plan.Ranks[only])
	case a.Generate != nil:
		err = a.Generate(spec, plan)
	case a.Rank != nil:
		err = perRank(a.Rank)(spec, plan)
	default:
		err = fmt.Errorf("algorithm %s/%s has no generator", a.Collective, a.Name)
	}
	if err != nil {
		return nil, err
	}
	if len(plan.Ranks) != plan.NRanks {
		return nil, fmt.Errorf("algorithm %s built %d programs for %d ranks", a.Name, len(plan.Ranks), plan.NRanks)
	}
	if only >= 0 {
		for i := range plan.Ranks {
			if i != only {
				plan.Ranks[i].Steps, plan.Ranks[i].deps, plan.Ranks[i].Sizes = nil, nil, Sizes{}
			}
		}
	}
	return plan, nil
}

// newPlan fills the header and the rank/node/local of every program.
func newPlan(spec *Spec, alg string) *Plan {
	t := spec.Topo
	n := t.NumGPUs()
	plan := &Plan{
		Collective: spec.Collective,
		Algorithm:  alg,
		Topology:   t.Name,
		NRanks:     n,
		Bytes:      spec.Bytes,
		DtypeBytes: spec.DtypeBytes,
		Counts:     spec.Counts,
		Ranks:      make([]RankProgram, n),
	}
	if spec.Collective == coll.Bcast {
		plan.Root = spec.Root
	}
	if spec.Collective.Routed() {
		plan.Routing = spec.Routing
	}
	r := 0
	for node := range t.Nodes {
		for local := range t.Nodes[node].GPUs {
			plan.Ranks[r] = RankProgram{Rank: r, Node: node, Local: local}
			r++
		}
	}
	return plan
}

// MaxBufferBytes bounds every buffer a spec implies (a rank's src and
// dst): the generators add and multiply int64 offsets within them, and a
// size that wraps gives negative offsets (a panic, or a plan whose sizes
// are negative). Far above any machine's memory.
const MaxBufferBytes = 1 << 62

// validateSpec checks what every generator relies on and fills the
// alltoallv counts when only Bytes is given.
func validateSpec(spec *Spec) error {
	if spec.Topo == nil {
		return errors.New("spec: no topology")
	}
	n := spec.Topo.NumGPUs()
	if n < 1 {
		return fmt.Errorf("spec: topology %q has no GPUs", spec.Topo.Name)
	}
	if _, err := coll.ParseCollective(string(spec.Collective)); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	switch spec.DtypeBytes {
	case 1, 2, 4, 8:
	default:
		return fmt.Errorf("spec: dtype size %d bytes: want 1, 2, 4 or 8", spec.DtypeBytes)
	}
	e := int64(spec.DtypeBytes)
	if spec.Bytes < 0 {
		return fmt.Errorf("spec: negative size %d bytes", spec.Bytes)
	}
	if spec.Bytes%e != 0 {
		return fmt.Errorf("spec: %d bytes is not a whole number of %d-byte elements", spec.Bytes, e)
	}
	if spec.Chunks < 0 {
		return fmt.Errorf("spec: negative chunk count %d", spec.Chunks)
	}
	if spec.Collective.Routed() {
		if err := validateRouting(spec, n); err != nil {
			return err
		}
	} else if spec.Routing != nil {
		return fmt.Errorf("spec: a routing is only for dispatch and combine, not %s", spec.Collective)
	}
	if spec.Collective != coll.Alltoallv {
		if spec.Counts != nil {
			return fmt.Errorf("spec: counts are only for alltoallv, not %s", spec.Collective)
		}
		if spec.Bytes == 0 {
			return fmt.Errorf("spec: %s of 0 bytes: want at least one element", spec.Collective)
		}
	}
	switch spec.Collective {
	case coll.Allgather, coll.ReduceScatter: // dst, src: n blocks
		if spec.Bytes > MaxBufferBytes/int64(n) {
			return fmt.Errorf("spec: %s of %d bytes on %d ranks: its buffers pass %d bytes", spec.Collective, spec.Bytes, n, int64(MaxBufferBytes))
		}
	case coll.Dispatch, coll.Combine: // at most every slot's row on one rank
		r := spec.Routing
		if slots := int64(len(r.Experts)); slots > 0 && r.TokenBytes > MaxBufferBytes/slots {
			return fmt.Errorf("spec: %s of %d slots of %d-byte rows: its buffers pass %d bytes", spec.Collective, slots, r.TokenBytes, int64(MaxBufferBytes))
		}
	}
	if spec.Collective == coll.Bcast && (spec.Root < 0 || spec.Root >= n) {
		return fmt.Errorf("spec: bcast root %d out of range 0..%d", spec.Root, n-1)
	}
	if spec.Collective == coll.Alltoallv {
		if spec.Counts == nil {
			spec.Counts = UniformCounts(n, spec.Bytes)
		}
		if err := coll.CheckMatrix(spec.Counts, n, e); err != nil {
			return fmt.Errorf("spec: alltoallv counts: %w", err)
		}
		if err := countSums(spec.Counts); err != nil {
			return fmt.Errorf("spec: alltoallv counts: %w", err)
		}
	}
	return nil
}

// countSums refuses a checked count matrix where a rank's src (its row)
// or dst (its column) passes MaxBufferBytes; the sums are taken so that
// they cannot wrap.
func countSums(m [][]int64) error {
	for i := range m {
		var row, col int64
		for j := range m {
			if m[i][j] > MaxBufferBytes-row {
				return fmt.Errorf("rank %d sends more than %d bytes in all", i, int64(MaxBufferBytes))
			}
			if m[j][i] > MaxBufferBytes-col {
				return fmt.Errorf("rank %d receives more than %d bytes in all", i, int64(MaxBufferBytes))
			}
			row, col = row+m[i][j], col+m[j][i]
		}
	}
	return nil
}

// validateRouting checks the routing of dispatch and combine and fills
// Bytes with its token size when it is left zero.
func validateRouting(spec *Spec, n int) error {
	r := spec.Routing
	if r == nil {
		return fmt.Errorf("spec: %s needs a routing (tokens, top-k experts, placement)", spec.Collective)
	}
	if err := r.Validate(n); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	if spec.Bytes == 0 {
		spec.Bytes = r.TokenBytes
	}
	if spec.Bytes != r.TokenBytes {
		return fmt.Errorf("spec: %s of %d bytes but the routing's tokens are %d bytes", spec.Collective, spec.Bytes, r.TokenBytes)
	}
	if r.TokenBytes%int64(spec.DtypeBytes) != 0 {
		return fmt.Errorf("spec: %d-byte tokens are not a whole number of %d-byte elements", r.TokenBytes, spec.DtypeBytes)
	}
	return nil
}

// UniformCounts is the alltoallv matrix of n ranks that send every peer
// (and themselves) bytes bytes.
func UniformCounts(n int, bytes int64) [][]int64 {
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
		for j := range m[i] {
			m[i][j] = bytes
		}
	}
	return m
}
