package sched

import (
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/topo"
)

// Spec is everything a generator needs to build a plan. Every rank builds
// the same plan from the same Spec, so plans need no communication.
type Spec struct {
	Collective coll.Collective
	Algorithm  string // a registered name (package choose picks one for "auto")
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
	// Routing is the token traffic of dispatch and combine (Bytes is its
	// TokenBytes, DtypeBytes the element size combine sums).
	Routing *moe.Routing
}

// NRanks is the number of ranks of the spec's topology.
func (s *Spec) NRanks() int { return s.Topo.NumGPUs() }

// UnsupportedError says why an algorithm cannot serve a spec (ranks that do
// not split into equal nodes, a message that does not split into whole
// elements, ...). GenerateFirst passes over such algorithms.
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
	if err == nil {
		return false // without an allocation: the team layer asks on every call
	}
	var u *UnsupportedError
	return errors.As(err, &u)
}
