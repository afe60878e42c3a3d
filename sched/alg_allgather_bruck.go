package sched

import "github.com/goring-hpc/goring/coll"

// Bruck allgather (Bruck et al. 1997; UCC tl/ucp "bruck"), any number of
// ranks, ceil(log2 P) rounds.
//
// Think of rank r's dst rotated so that position i holds block (r+i) mod P;
// position 0 is its own block. In round k (distance d = 2^k) rank r sends
// positions [0, m) to r-d and receives positions [d, d+m) from r+d, with
// m = min(d, P-d): the receiver's positions d.. are exactly the sender's
// positions 0.., because both name blocks r+d, r+d+1, ... So after the
// rounds position i is filled for every i < P. Instead of rotating a
// scratch copy at the end, we write every position straight into its block
// of dst; a run of positions that wraps past block P-1 becomes two
// transfers, split at the same block on both sides.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allgather,
		Name:       "bruck",
		Desc:       "Bruck: ceil(log2 P) rounds with distances 1, 2, 4, ..., any rank count",
		Paper:      "Parallel Rings section II baselines (UCC tl/ucp bruck)",
		Rank:       allgatherBruckRank,
	})
}

// wrapRuns splits the blocks first, first+1, ..., first+m-1 (mod n) into at
// most two runs of consecutive block indexes.
func wrapRuns(first, m, n int) [][2]int {
	if first+m <= n {
		return [][2]int{{first, m}}
	}
	return [][2]int{{first, n - first}, {0, first + m - n}}
}

func allgatherBruckRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	h := startAllgather(spec, plan, prog)
	r, B, elem := prog.Rank, spec.Bytes, spec.DtypeBytes
	k := ChunkCount(B, spec.Chunks, elem)
	ls := newLockstep(2 * k)
	for round, d := 0, 1; d < n; round, d = round+1, d*2 {
		m := min(d, n-d)
		to, from := (r-d+n)%n, (r+d)%n
		sendRuns := wrapRuns(r, m, n)
		recvRuns := wrapRuns(from, m, n)
		for part := 0; part < 2; part++ {
			for c := 0; c < k; c++ {
				slot := part*k + c
				tag := ChunkTag(round, slot, 2*k)
				deps := ls.deps(slot)
				var ids []int
				if part < len(sendRuns) {
					run := sendRuns[part]
					sp := ChunkSpan(Span{int64(run[0]) * B, int64(run[1]) * B}, k, c, elem)
					ids = append(ids, h.Send(to, tag, At(BufDst, sp.Off), sp.Len, Path{}, deps...))
				}
				if part < len(recvRuns) {
					run := recvRuns[part]
					rp := ChunkSpan(Span{int64(run[0]) * B, int64(run[1]) * B}, k, c, elem)
					ids = append(ids, h.Recv(from, tag, At(BufDst, rp.Off), rp.Len, deps...))
				}
				if len(ids) > 0 {
					ls.set(slot, ids...)
				}
			}
		}
	}
	return nil
}
