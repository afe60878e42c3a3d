package tune

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
)

// UCPAlgorithm is the goring schedule closest to the algorithm UCC
// v1.8.0's tl/ucp runs by default for c on bytes (goring's meaning: per
// rank for allgather) with procs ranks, from its default selection
// strings (src/components/tl/ucp/*/*.h, *_score_str_get):
//
//   - allreduce: knomial up to 4 KiB, scatter-reduce-allgather knomial
//     above. Knomial of radix 2 is recursive doubling; UCC's automatic
//     radix is larger on more ranks (one round with every peer at 4
//     ranks), so on 4 or more ranks the model gives tl/ucp more rounds than
//     it makes and overstates its small-message time by about one message
//     cost. Scatter-reduce-allgather is Rabenseifner's.
//   - allgather: knomial up to 4 KiB of the whole result (recursive
//     doubling on a power of two, else Bruck's), neighbor exchange above
//     on an even rank count, ring on an odd one.
//   - reduce_scatter: ring.
//   - bcast: knomial; on 3 or more ranks from 32 KiB UCC runs
//     scatter-allgather, which goring has no schedule for, so the model
//     gives tl/ucp the knomial tree there and overstates its time.
//
// Alltoall(v) run pairwise in both layers and get no model.
func UCPAlgorithm(c coll.Collective, bytes int64, procs int) (string, error) {
	pow2 := procs&(procs-1) == 0
	switch c {
	case coll.Allreduce:
		if bytes <= 4<<10 {
			return "recursive_doubling", nil
		}
		return "rabenseifner", nil
	case coll.Allgather:
		switch {
		case bytes*int64(procs) <= 4<<10 && pow2:
			return "recursive_doubling", nil
		case bytes*int64(procs) <= 4<<10:
			return "bruck", nil
		case procs%2 == 0:
			return "neighbor", nil
		default:
			return "ring", nil
		}
	case coll.ReduceScatter:
		return "ring", nil
	case coll.Bcast:
		return "knomial", nil
	}
	return "", fmt.Errorf("tune: no model of tl/ucp's %s", c)
}
