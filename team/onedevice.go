package team

import (
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/exec"
)

// The leader algorithms on a shared GPU: where every rank's process sees
// the same single GPU, a call of allreduce, allgather, reduce_scatter (up
// to 8 ranks: direct.Serves) or bcast "leader" on CUDA buffers
// runs on package direct's device backend (rank 0 maps everyone's
// buffers and does all the copies and reductions itself) instead of as
// the messages of sched's program, which is what runs everywhere else.
// Where the leader could not map every rank's buffers (memory a CUDA IPC
// handle does not export, such as a stream-ordered pool's), every rank
// gets direct.ErrUnmapped alike with nothing written, and runs the same
// call as the leader algorithm's messages, whose pushes fall back to UCX
// per transfer: the collective completes, only slower (directRunner,
// direct.go).

// runsOnOneDevice reports whether a call of alg on mem runs as one
// process's device work.
func (t *Team) runsOnOneDevice(a Args, alg string, mem exec.Mem) bool {
	return !mem.IsHost() && t.leaderCapable() && direct.Runs(alg, a.Coll, t.size)
}

// leaderCapable says whether the team's CUDA calls can run as one
// process's device work: its ranks share one GPU of one host, and the
// push engine is on.
func (t *Team) leaderCapable() bool { return t.sharedGPU && t.engine != nil && t.oneHost }

// newOneDeviceRunner prepares the call to run on the shared GPU: B is the call's
// vector (an allreduce's, a bcast's) or block (an allgather's, a
// reduce_scatter's). In place, the leader reads every input before it
// writes any result, so no private copy is made: an allreduce's source is
// its result, an allgather's the rank's own block of its result, and a
// reduce_scatter's result the rank's block of its input (UCC's meaning);
// a bcast has one buffer.
func newOneDeviceRunner(k *Call) (Runner, error) {
	c, a, mem, B := k.coll, k.Args, k.mem, k.bytes
	t := c.team
	switch {
	case a.Coll == coll.Bcast && a.Dst == nil && a.Src == nil:
		return nil, Invalid("bcast: missing buffer")
	case a.Coll != coll.Bcast && (a.Dst == nil || (!a.InPlace && a.Src == nil)):
		return nil, Invalid("%s: missing buffer", a.Coll)
	}
	srcLen, dstLen := B, B
	switch a.Coll {
	case coll.Allgather:
		dstLen = int64(t.size) * B
	case coll.ReduceScatter:
		srcLen = int64(t.size) * B
	}
	view := func(p unsafe.Pointer, n int64) exec.Region { return deviceRegion(mem, p, n) }
	src, dst := place(a, t.rank, B, srcLen, dstLen, view)
	dtype, op := a.Coll.Reduction(a.Dtype, a.Op)
	return &directRunner{c: c, call: t.directCall(), cfg: direct.Config{Collective: a.Coll, Rank: t.rank, Size: t.size, Root: a.Root, Src: src, Dst: dst,
		Dtype: dtype, Op: op, Device: &direct.Device{Mapper: t.engine, Local: c.gpu.local, Stats: &t.leaderStats}}}, nil
}
