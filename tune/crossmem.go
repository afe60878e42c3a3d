package tune

import "github.com/goring-hpc/goring/coll"

// Cross-memory reads (package crossmem; the team layer's
// UCC_TL_GORING_CROSSMEM=auto): a host allreduce or allgather of a team on
// one host whose ranks read each other's buffers, each rank's part on
// threads. What pays is measured, not modelled (docs/ucc.md "Reading the
// peers' memory"); crossCallMin is the table.

// CrossMaxThreads bounds crossmem=auto's threads a rank.
const CrossMaxThreads = 4

// crossCallMin is the fewest bytes (the call's vector; an allgather's
// block per rank) from which a call of the collective on a team of the
// given size runs by cross-memory reads with at least crossMinThreads
// threads (absent: never).
var crossCallMin = map[coll.Collective]map[int]int64{
	coll.Allreduce: {4: 8 << 20},
}

// crossMinThreads is the fewest threads a rank needs for crossCallMin's
// gains: on one thread the reads were no faster than messages.
const crossMinThreads = 4

// CrossThreads is the threads a rank runs its parts on with
// crossmem=auto: the cores it may run on shared among its host's ranks,
// at most CrossMaxThreads, at least one; localRanks 0 (unknown) gives one.
func CrossThreads(cpus, localRanks int) int {
	if localRanks < 1 {
		return 1
	}
	return max(1, min(CrossMaxThreads, cpus/localRanks))
}

// CrossCall reports whether crossmem=auto runs a host call of c on bytes
// (the call's vector; an allgather's block per rank) by cross-memory
// reads on a team of procs whose ranks have threads threads each.
func CrossCall(c coll.Collective, procs, threads int, bytes int64) bool {
	least, ok := crossCallMin[c][procs]
	return ok && threads >= crossMinThreads && bytes >= least
}
