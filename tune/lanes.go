package tune

import "github.com/goring-hpc/goring/coll"

// Lanes on a host with cores to spare (Multi-lane, §3: several CPU
// workers per rank, each driving part of the buffer). A lane is a UCX
// worker and a thread; on host memory its part of a call moves at one
// core's copy rate, so lanes pay where a rank's single thread, not the
// host's memory, sets the time. Measured through UCC (ucc_perftest -m
// host, goring forced with 1, 2, 3 and 4 lanes, beside tl/ucp and Open
// MPI's own collectives, three runs) on a 16-core Xeon whose one thread
// copies at 13.8 GB/s and whose cores together copy at 50 GB/s
// (docs/ucc.md "Lanes on a host with cores to spare"):
//   - 2 ranks: four lanes 1.4-2.5x one lane for allreduce and 1.6-2.2x
//     for allgather at 4-16 MiB per rank; at 1 MiB every lane count above
//     one was slower (217-265 against 143-245 us), at 2 MiB two lanes
//     about even;
//   - 4 ranks: allgather gains with two or three lanes from 4 MiB
//     (1.3-2.2x; 1.1x at 2 MiB), four no more than two or three (less in
//     one run), so two is the cap; allreduce gains with none: four ranks'
//     reduce-scatter and allgather already move about as much as the
//     host's memory carries (3.3 ms at 16 MiB, the all-core copy rate),
//     and every extra lane made it slower;
//   - 8 ranks: every lane count above one was slower, for both.
//
// So a call takes lanes only where each part is at least LaneMinPart, and
// no more than laneCap says for its collective and team size; elsewhere
// one lane. Teams and collectives not measured take one lane.
const LaneMinPart = 1 << 20

// laneCap is the most lanes a call of the collective takes on a team of
// the given size (absent: one).
var laneCap = map[coll.Collective]map[int]int{
	coll.Allgather: {2: 4, 4: 2},
	coll.Allreduce: {2: 4},
}

// CallLanes is how many of a team's w lanes a host call of c on bytes
// (the call's vector; an allgather's block per rank) runs on, when the
// team's lanes were chosen for the host (lanes=auto). A team whose user
// named a lane count splits every call that many ways instead.
func CallLanes(c coll.Collective, procs, w int, bytes int64) int {
	n := min(w, laneCap[c][procs], int(min(bytes/LaneMinPart, int64(coll.MaxLanes))))
	return max(n, 1)
}

// AutoLanes is the lanes a rank of a team of procs opens when its lane
// count is left to goring: the cores it may run on shared among the ranks
// of its host, no more than any call of such a team takes (laneCap: none
// for a team whose calls all take one, such as 8 ranks) and at least one.
// localRanks 0 (unknown) gives one.
func AutoLanes(procs, cpus, localRanks int) int {
	if localRanks < 1 {
		return 1
	}
	most := 1
	for _, caps := range laneCap {
		most = max(most, caps[procs])
	}
	return max(1, min(most, cpus/localRanks))
}
