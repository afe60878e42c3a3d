package coll

import "fmt"

// How a collective's buffer is shared among W lanes (Multi-lane, §3:
// several workers per rank, each driving part of the buffer). The rule is
// defined here once; the bench runner, the team layer and the simulator
// all split with LaneSplit.
//
// A lane part is a byte range [Off, Off+Len) of the collective's per-rank
// count (UCC's meaning, see Collective): for allreduce and bcast the whole
// vector, for allgather each rank's contribution, for reduce_scatter each
// rank's output block. Lane w runs the same collective over its part on
// every rank; for allgather and reduce_scatter part w of every rank's
// block forms lane w's buffer, so the lane's blocks lie B bytes apart in
// the caller's N-block buffer.
//
// The split is into whole grains, as equal as the grains allow: the first
// (grains mod W) lanes take one grain more, and the tail that is no whole
// grain goes to the last lane. A grain is one element (dtypeBytes; one
// byte for a moving collective). For allreduce it is N elements when the
// vector holds at least one such grain per lane, so each lane's vector
// splits over the N ranks as evenly as the whole one does (a ring's N
// chunks stay equal). Lanes may get zero bytes (fewer grains than lanes):
// they run nothing.

// LanePart is lane w's share of a collective's per-rank count.
type LanePart struct {
	Off, Len int64
}

// MaxLanes bounds W: one UCX worker and endpoint set per lane, and the
// simulator and options refuse more.
const MaxLanes = 64

// CheckLanes refuses a lane count outside [1, MaxLanes] and collectives
// whose buffers do not split into lanes: alltoallv (its counts matrix
// would need a split per pair; it keeps one lane) with W > 1.
func CheckLanes(c Collective, w int) error {
	if w < 1 || w > MaxLanes {
		return fmt.Errorf("lanes %d: want 1 to %d", w, MaxLanes)
	}
	if w > 1 && c == Alltoallv {
		return fmt.Errorf("lanes %d: alltoallv runs on one lane (its counts matrix does not split into lanes)", w)
	}
	return nil
}

// LaneGrain is the unit LaneSplit cuts bytes into (see above).
func LaneGrain(c Collective, bytes int64, dtypeBytes, nranks, w int) int64 {
	g := int64(max(dtypeBytes, 1))
	if c == Allreduce && nranks > 1 && bytes >= g*int64(nranks)*int64(w) {
		g *= int64(nranks)
	}
	return g
}

// LaneSplit cuts bytes (a whole number of dtypeBytes elements) into w
// parts for a collective of nranks ranks; see the rule above. The parts
// are contiguous, in lane order, and cover bytes exactly.
func LaneSplit(c Collective, bytes int64, dtypeBytes, nranks, w int) []LanePart {
	if w < 1 {
		w = 1
	}
	g := LaneGrain(c, bytes, dtypeBytes, nranks, w)
	grains := bytes / g
	tail := bytes - grains*g
	parts := make([]LanePart, w)
	var off int64
	for i := range parts {
		n := grains / int64(w)
		if int64(i) < grains%int64(w) {
			n++
		}
		n *= g
		if i == w-1 {
			n += tail
		}
		parts[i] = LanePart{Off: off, Len: n}
		off += n
	}
	return parts
}
