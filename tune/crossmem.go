package tune

import "github.com/goring-hpc/goring/coll"

// Cross-memory reads (package direct's host backend; the team layer's
// UCC_TL_GORING_CROSSMEM=auto): a host allreduce or allgather of a team on
// one host whose ranks read (and, an allreduce, write) each other's
// buffers, each rank's part on threads. Where it pays is measured, not
// modelled: the simulator has no figures for process_vm_readv's rate or
// for threads sharing a host's memory. Measured through UCC (ucc_perftest
// -m host, goring forced with 1, 2 and 4 threads, beside tl/ucp and Open
// MPI's own collectives, --bind-to none) on a 16-core Xeon, one run per
// version; best = the faster of tl/ucp and Open MPI's own
// (docs/ucc.md "Reading the peers' memory"), best / crossmem at
// 512 KiB / 1 / 2 / 4 / 8 / 16 MiB per rank:
//   - 2 ranks, 4 threads: allreduce 1.17 / 1.39 / 1.89 / 2.15 / 2.29 /
//     3.25, allgather 1.15 / 1.19 / 1.20 / 2.08 / 3.25 / 2.72; 256 KiB
//     0.76-0.81;
//   - 2 ranks, 2 threads: allreduce 0.70 / 0.90 / 1.22 / 1.22 / 1.53 /
//     1.63, allgather 1.66 / 1.55 / 1.35 / 1.89 / 2.22 / 1.99;
//   - 4 ranks, 4 threads: allreduce 0.72 / 1.08 / 1.16 / 1.77 / 2.41 /
//     3.21, allgather 0.72 / 0.76 / 0.82 / 1.46 / 2.83 / 2.75 (the 4-rank
//     allgather at 1-2 MiB moves what the host's memory carries, as
//     tl/ucp's does);
//   - 4 ranks, 2 threads: allreduce 0.94 / 1.15 / 1.31 / 1.55 / 1.62 /
//     1.67, allgather 0.74 / 1.01 / 0.96 / 1.46 / 1.64 / 1.51;
//   - 3 ranks, 4 threads: allreduce 1.10 / 1.37 / 1.61 / 2.24 / 2.96 /
//     4.10, allgather 0.96 / 0.91 / 0.92 / 1.69 / 2.87 / 3.94; 2 threads:
//     allreduce 0.89 / 1.14 / 1.57 / 1.74 / 1.99 / 2.40, allgather 0.97 /
//     0.96 / 0.97 / 1.66 / 1.64 / 1.83;
//   - 8 ranks, 2 threads (all 16 cores): allreduce 0.50 / 0.73 / 0.90 /
//     1.41 / 1.50 / 1.63, allgather 0.67 / 0.66 / 0.63 / 1.11 / 1.48 /
//     1.52 (4 threads there oversubscribe the host; a host with the cores
//     for them is not measured and gets the 2-thread sizes);
//   - 5 and 6 ranks, 2 threads (measured later, OMB through coll/ucc,
//     Open MPI's own under pml ob1, goring forced with
//     UCC_TL_GORING_CROSSMEM=2, medians of 3 rounds; docs/ucc.md "Five to
//     eight ranks"), best / crossmem at 256 KiB / 512 KiB / 1 / 2 / 4 / 8
//     / 16 MiB: 5 ranks allreduce 0.64 / 0.84 / 1.26 / 1.42 / 1.80 / 1.89
//     / 2.25, allgather 0.63 / 0.73 / 0.70 / 0.71 / 1.20 / 1.43 / 1.70; 6
//     ranks allreduce 0.46 / 0.65 / 0.99 / 1.14 / 1.55 / 1.78 / 2.07,
//     allgather 0.61 / 0.64 / 0.69 / 0.64 / 1.23 / 1.47 / 1.63 (a host
//     with 4 threads for them is not measured and gets these sizes);
//   - one thread: 0.6-1.3, not worth it, but for the 2-rank allgather:
//     1.16 / 1.09 / 1.23 / 1.26 / 1.36 / 1.23.
// On the 2-core development machine (OMB through coll/ucc, 2 ranks, one
// thread each; docs/ucc.md "One thread a rank") the allgather with the
// shipped file was 0.78-0.84 of tl/ucp at 1 MiB and 0.95-1.28 from
// 2 MiB (Open MPI's own was faster still: the file at 0.81-1.01 of it);
// the allreduce with one thread there was 0.71-1.00 of tl/ucp. So one
// thread takes the 2-rank allgather from 2 MiB, where both machines agree.
// So a call runs by cross-memory reads from crossCallMin's size for its
// threads, collective and team size; teams not measured (7 ranks, more
// than 8) never do, nor do ranks of a host with more ranks than CPUs
// (CrossThreads: none), where a rank waiting for a peer takes the core
// the peer needs (4 ranks on 2 cores, one thread: 0.51-0.97 of the best).

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
