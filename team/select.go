package team

import (
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// Call is a collective call resolved for its team: UCC's arguments, where
// its buffers are, the algorithm it runs (and the one to fall back on
// where that does not serve the shape), and the bytes of its vector (an
// allgather's block; 0 for alltoallv, whose bytes differ by peer).
type Call struct {
	Args
	coll          *Coll // the call's owner: its memory, its GPU
	mem           exec.Mem
	alg, fallback string
	bytes         int64
	at            int // the selection's runner that runs it now
}

// runnerKind is one way a call may run: its name (Coll.Runner), whether
// it takes a call on a team, and how its runner is built. Every rank
// reaches the same verdict on the same call: the ranks' runners talk to
// each other.
type runnerKind struct {
	name  string
	takes func(t *Team, k *Call) bool
	build func(k *Call) (Runner, error)
}

// selection is the order in which a team offers a call to its runners:
// the first that takes it runs it, and the ones after it are its
// fallbacks. Alltoallv comes first: only the messages run it (on one
// Machine, after a count exchange where its algorithm needs one); so do
// dispatch and combine (on one Machine, from the routing every rank
// holds). The
// engines of one host follow, each taking only the calls it serves, then
// the messages, on several lanes where the call pays for them, else on
// one Machine, which takes every call. A new engine is one more entry,
// before the messages.
var selection = []runnerKind{
	{"alltoallv", func(_ *Team, k *Call) bool { return k.Coll == coll.Alltoallv }, newAlltoallvRunner},                   // alltoallv.go
	{"moe", func(_ *Team, k *Call) bool { return k.Coll.Routed() }, newMoERunner},                                        // moe.go
	{"node", func(t *Team, k *Call) bool { return t.runsNode(k.Args, k.mem, k.bytes) }, newNodeRunner},                   // node.go
	{"onedevice", func(t *Team, k *Call) bool { return t.runsOnOneDevice(k.Args, k.alg, k.mem) }, newOneDeviceRunner},    // onedevice.go, direct.go
	{"crossmem", func(t *Team, k *Call) bool { return t.runsCrossmem(k.Args, k.mem, k.bytes) }, newCrossRunner},          // crossmem.go, direct.go
	{"lanes", func(t *Team, k *Call) bool { return k.mem.IsHost() && t.callLanes(k.Args, k.bytes) > 1 }, newLanesRunner}, // lanes.go
	{"machine", func(*Team, *Call) bool { return true }, newMachineRunner},                                               // machine.go
}

// Select builds the runner of the first kind in the selection that takes
// the call on t.
func Select(k *Call, t *Team) (Runner, error) {
	k.at = -1
	return k.next(t)
}

// next builds the runner of the first kind after the call's current one
// that takes it on t.
func (k *Call) next(t *Team) (Runner, error) {
	for k.at++; k.at < len(selection); k.at++ {
		if rk := selection[k.at]; rk.takes(t, k) {
			return rk.build(k)
		}
	}
	return nil, NotSupported("%s: no runner takes the call", k.Coll) // the messages take every call
}
