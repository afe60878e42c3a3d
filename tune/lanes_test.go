package tune

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// A call takes lanes where each part is at least LaneMinPart and its
// collective and team size were measured to gain, never more than the
// team has; everything else takes one.
func TestCallLanes(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		c     coll.Collective
		procs int
		w     int
		bytes int64
		want  int
	}{
		{coll.Allreduce, 2, 4, 64 << 10, 1},
		{coll.Allreduce, 2, 4, MiB, 1},
		{coll.Allreduce, 2, 4, 2 * MiB, 2},
		{coll.Allreduce, 2, 4, 3 * MiB, 3},
		{coll.Allreduce, 2, 4, 16 * MiB, 4},
		{coll.Allreduce, 2, 2, 16 * MiB, 2},
		{coll.Allreduce, 4, 4, 16 * MiB, 1},
		{coll.Allgather, 4, 4, 16 * MiB, 2},
		{coll.Allgather, 4, 4, MiB, 1},
		{coll.Allgather, 2, 8, 1 << 40, 4},
		{coll.Allgather, 8, 4, 16 * MiB, 1},
		{coll.ReduceScatter, 2, 4, 16 * MiB, 1},
		{coll.Bcast, 2, 4, 16 * MiB, 1},
		{coll.Allreduce, 2, 1, 16 * MiB, 1},
	} {
		assert.Equal(t, c.want, CallLanes(c.c, c.procs, c.w, c.bytes), "%s, %d ranks, %d lanes, %d bytes", c.c, c.procs, c.w, c.bytes)
	}
}

func TestAutoLanes(t *testing.T) {
	for _, c := range []struct{ procs, cpus, local, want int }{
		{2, 16, 2, 4}, {4, 16, 4, 2}, {2, 16, 8, 2}, {2, 16, 16, 1}, {2, 16, 32, 1},
		{2, 2, 2, 1}, {2, 2, 1, 2}, {2, 1, 1, 1}, {2, 64, 0, 1}, {2, 128, 2, 4},
		{8, 16, 8, 1}, {8, 128, 8, 1}, {3, 16, 3, 1}, {1, 16, 1, 1},
	} {
		assert.Equal(t, c.want, AutoLanes(c.procs, c.cpus, c.local), "team of %d, %d CPUs, %d local ranks", c.procs, c.cpus, c.local)
	}
}
