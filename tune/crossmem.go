package tune

import "github.com/goring-hpc/goring/coll"

// Cross-memory reads (package direct's host backend; the team layer's
// UCC_TL_GORING_CROSSMEM=auto): a host allreduce or allgather of a team on
// one host whose ranks read (and, an allreduce, write) each other's
// buffers, each rank's part on threads. Where it pays is measured, not
// modelled: the simulator has no figures for process_vm_readv's rate or
// for threads sharing a host's memory. crossCallMin holds, per thread
// count, collective and team size, the smallest size from which reading
// beat the faster of tl/ucp and Open MPI's own collectives in the runs
// docs/ucc.md records with their commands ("Reading the peers' memory" on
// a 16-core Xeon, 2-8 ranks, 1-4 threads; "Five to eight ranks"; "One
// thread a rank" on the 2-core development machine, where one thread paid
// only for the 2-rank allgather from 2 MiB). Teams not measured (7 ranks,
// more than 8) never read, nor do ranks of a host with more ranks than
// CPUs (CrossThreads: none), where a rank waiting for a peer takes the
// core the peer needs.

// CrossMaxThreads bounds crossmem=auto's threads a rank.
const CrossMaxThreads = 4

// crossCallMin is the fewest bytes (the call's vector; an allgather's
// block per rank) from which a call of the collective on a team of the
// given size runs by cross-memory reads, for ranks of one thread ([0]),
// 2-3 ([1]) or at least 4 ([2]) (absent: never).
var crossCallMin = [3]map[coll.Collective]map[int]int64{
	{
		coll.Allgather: {2: 2 << 20},
	},
	{
		coll.Allreduce: {2: 2 << 20, 3: 1 << 20, 4: 1 << 20, 5: 1 << 20, 6: 2 << 20, 8: 4 << 20},
		coll.Allgather: {2: 512 << 10, 3: 4 << 20, 4: 4 << 20, 5: 4 << 20, 6: 4 << 20, 8: 4 << 20},
	},
	{
		coll.Allreduce: {2: 512 << 10, 3: 512 << 10, 4: 1 << 20, 5: 1 << 20, 6: 2 << 20, 8: 4 << 20},
		coll.Allgather: {2: 512 << 10, 3: 4 << 20, 4: 4 << 20, 5: 4 << 20, 6: 4 << 20, 8: 4 << 20},
	},
}

// CrossThreads is the threads a rank runs its parts on with
// crossmem=auto: the cores it may run on (cpus) shared among its host's
// ranks, at most CrossMaxThreads, at least one; localRanks 0 (unknown)
// gives one. A host with more ranks than it has CPUs (hostCPUs, 0:
// unknown) gives none: nothing runs this way there.
func CrossThreads(cpus, localRanks, hostCPUs int) int {
	if localRanks < 1 {
		return 1
	}
	if hostCPUs > 0 && localRanks > hostCPUs {
		return 0
	}
	return max(1, min(CrossMaxThreads, cpus/localRanks))
}

// CrossCall reports whether crossmem=auto runs a host call of c on bytes
// (the call's vector; an allgather's block per rank) by cross-memory
// reads on a team of procs whose ranks have threads threads each.
func CrossCall(c coll.Collective, procs, threads int, bytes int64) bool {
	if threads < 1 {
		return false
	}
	row := crossCallMin[0]
	switch {
	case threads >= 4:
		row = crossCallMin[2]
	case threads >= 2:
		row = crossCallMin[1]
	}
	least, ok := row[c][procs]
	return ok && bytes >= least
}
