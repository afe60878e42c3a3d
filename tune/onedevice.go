package tune

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
)

// Leader is the engine that runs the leader algorithms of a shared GPU as
// one process's device work (package direct's Model): whether a call
// of alg runs there, and the ops of one and the bytes they read plus
// write. The caller gives it (Shape.Leader, Regime.Leader), so that tune
// imports neither the executor nor the engine.
type Leader interface {
	Runs(alg string, c coll.Collective, procs int) bool
	Work(c coll.Collective, procs int, bytes int64) (ops int, moved int64, err error)
}

// OneDevice is what the leader algorithms cost where one process does all
// of a shared GPU's work: no turns of the GPU between processes, so
// neither the simulator's per-step cost of the shared-GPU topology nor
// its quarter share of the copy rate applies. The call costs a fixed part
// (the ARRIVE and FINISH messages, the buffers' keys and mappings looked
// up), a part per op (a launch and an event) and its bytes read and
// written at one context's memory rate. The figures are in costs.go.
type OneDevice struct {
	CallUS, OpUS float64
	// MemGBps is bytes read plus bytes written per second.
	MemGBps float64
}

// predict is the leader algorithm's time for c on procs ranks of bytes,
// its work as engine l does it.
func (o OneDevice) predict(l Leader, c coll.Collective, procs int, bytes int64) (float64, error) {
	ops, moved, err := l.Work(c, procs, bytes)
	if err != nil {
		return 0, err
	}
	if o.MemGBps <= 0 {
		return 0, fmt.Errorf("tune: one-device memory rate %v GB/s", o.MemGBps)
	}
	return o.CallUS + o.OpUS*float64(ops) + float64(moved)/(o.MemGBps*1e3), nil
}
