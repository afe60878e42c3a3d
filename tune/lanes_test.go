package tune

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// With lanes opened for the host (lanes=auto), the model claims the host
// calls that take several lanes, and only those: on 2 ranks allreduce and
// allgather from 2 MiB per rank, on 4 ranks allgather from 2 MiB per rank
// and no allreduce (it takes one lane there), on 8 ranks nothing; with
// one lane nothing (TestHostClaimsNothing).
func TestHostClaimsWhereLanesPay(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		procs int
		coll  coll.Collective
		want  []Range
	}{
		{2, coll.Allreduce, []Range{{2 * MiB, 0}}},
		{2, coll.Allgather, []Range{{2 * MiB, 0}}},
		{4, coll.Allgather, []Range{{2 * MiB, 0}}},
		{4, coll.Allreduce, nil},
		{8, coll.Allgather, nil},
		{2, coll.ReduceScatter, nil},
		{2, coll.Bcast, nil},
	} {
		r, err := Host(c.procs, 64<<10)
		require.NoError(t, err)
		r.Lanes = 4
		pts, err := Compare(r, c.coll, 4, Sizes(), defaultChooser(true, c.procs))
		require.NoError(t, err)
		assert.Equal(t, c.want, Ranges(pts), "%s on %d processes", c.coll, c.procs)
		for _, p := range pts {
			if p.Claimed {
				assert.Contains(t, p.GoringAlg, "/L", "a claimed size runs on lanes")
			}
		}
	}
}

func TestCrossCall(t *testing.T) {
	const KiB, MiB = 1 << 10, 1 << 20
	for _, c := range []struct {
		c              coll.Collective
		procs, threads int
		bytes          int64
		want           bool
	}{
		{coll.Allreduce, 2, 4, 512 * KiB, true},
		{coll.Allreduce, 2, 4, 256 * KiB, false},
		{coll.Allreduce, 2, 2, 1 * MiB, false},
		{coll.Allreduce, 2, 3, 2 * MiB, true},
		{coll.Allreduce, 4, 4, 1 * MiB, true},
		{coll.Allreduce, 4, 2, 512 * KiB, false},
		{coll.Allgather, 4, 4, 2 * MiB, false},
		{coll.Allgather, 4, 4, 4 * MiB, true},
		{coll.Allgather, 2, 2, 512 * KiB, true},
		{coll.Allreduce, 2, 1, 16 * MiB, false}, // one thread: the 2-rank allgather only
		{coll.Allgather, 2, 1, 2 * MiB, true},
		{coll.Allgather, 2, 1, 1 * MiB, false},
		{coll.Allgather, 4, 1, 16 * MiB, false},
		{coll.Allgather, 2, 0, 16 * MiB, false}, // more ranks than CPUs: none
		{coll.Allreduce, 8, 2, 4 * MiB, true},
		{coll.Allreduce, 8, 2, 2 * MiB, false},
		{coll.Allreduce, 3, 4, 512 * KiB, true},
		{coll.Allgather, 3, 4, 2 * MiB, false},
		{coll.Allreduce, 5, 2, 1 * MiB, true},
		{coll.Allreduce, 5, 2, 512 * KiB, false},
		{coll.Allreduce, 6, 2, 2 * MiB, true},
		{coll.Allreduce, 6, 2, 1 * MiB, false},
		{coll.Allgather, 6, 4, 4 * MiB, true},
		{coll.Allgather, 5, 2, 2 * MiB, false},
		{coll.Allgather, 6, 1, 16 * MiB, false}, // one thread: the 2-rank allgather only
		{coll.Allreduce, 7, 2, 16 * MiB, false}, // not measured
		{coll.Allgather, 16, 2, 16 * MiB, false},
		{coll.ReduceScatter, 2, 4, 16 * MiB, false},
	} {
		assert.Equal(t, c.want, CrossCall(c.c, c.procs, c.threads, c.bytes), "%+v", c)
	}
	assert.Equal(t, 4, CrossThreads(16, 2, 16))
	assert.Equal(t, 2, CrossThreads(16, 8, 16))
	assert.Equal(t, 1, CrossThreads(1, 2, 2), "each rank bound to its own core")
	assert.Equal(t, 0, CrossThreads(2, 4, 2), "4 ranks on 2 CPUs: none")
	assert.Equal(t, 1, CrossThreads(2, 4, 0), "the host's CPUs unknown")
	assert.Equal(t, 1, CrossThreads(16, 0, 16), "no launcher says: one")
}

// crossmem=auto: the sizes CrossCall takes are claimed as measured; with
// lanes as well, the rest of the host sizes as the lanes predict.
func TestHostClaimsWhereCrossmemPays(t *testing.T) {
	const MiB = 1 << 20
	r, err := Host(4, 64<<10)
	require.NoError(t, err)
	r.Cross = 4
	pts, err := Compare(r, coll.Allreduce, 4, Sizes(), defaultChooser(true, 4))
	require.NoError(t, err)
	assert.Equal(t, []Range{{1 * MiB, 0}}, Ranges(pts))
	for _, p := range pts {
		assert.Equal(t, p.Bytes >= MiB, p.Measured, "%d bytes", p.Bytes)
		if p.Measured {
			assert.Equal(t, "crossmem/T4", p.GoringAlg)
			assert.Positive(t, p.UCPUS, "tl/ucp is still predicted")
		}
	}
	r.Cross = 1
	pts, err = Compare(r, coll.Allreduce, 4, Sizes(), defaultChooser(true, 4))
	require.NoError(t, err)
	assert.Empty(t, Ranges(pts), "one thread claims no allreduce")
	r2, err := Host(2, 64<<10)
	require.NoError(t, err)
	r2.Cross = 1
	pts, err = Compare(r2, coll.Allgather, 2, Sizes(), defaultChooser(true, 2))
	require.NoError(t, err)
	assert.Equal(t, []Range{{2 << 20, 0}}, Ranges(pts), "one thread: the 2-rank allgather from 2 MiB")
}

func TestCountCPUList(t *testing.T) {
	for s, want := range map[string]int{"0\n": 1, "0-1": 2, "0-23,48-71\n": 48, "0,2,4-5": 4} {
		n, err := CountCPUList(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, n, s)
	}
	for _, bad := range []string{"", "x", "3-1", "0-", "-1", "0,,1"} {
		_, err := CountCPUList(bad)
		assert.Error(t, err, bad)
	}
}
