package tune

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/onedevice"
	"github.com/goring-hpc/goring/topo"
)

// OneDevice is what the leader algorithms cost where one process does all
// of a shared GPU's work (package onedevice): no turns of the GPU between
// processes, so neither the simulator's per-step cost of the shared-GPU
// topology nor its quarter share of the copy rate applies. The call costs
// a fixed part (the ARRIVE and FINISH messages, the buffers' keys and
// mappings looked up), a part per op (a launch and an event) and its
// bytes read and written at one context's memory rate.
type OneDevice struct {
	CallUS, OpUS float64
	// MemGBps is bytes read plus bytes written per second.
	MemGBps float64
	// Fuse is the most operands of one op (onedevice.PlanWork).
	Fuse int
}

// SharedH100OneDevice are the figures on one H100: the memory rate is the
// h100-shared4 fit's copy rate (the four processes' together, which one
// context reaches alone) counted as bytes read and written; the fixed and
// per-op parts are two small UCX messages and a launch with its event.
// The team layer's executor fuses up to exec.MultiMax operands.
var SharedH100OneDevice = OneDevice{CallUS: 30, OpUS: 5, MemGBps: 2 * topo.SharedH100CopyGBps, Fuse: exec.MultiMax}

// predict is the leader algorithm's time for c on procs ranks of bytes.
func (o OneDevice) predict(c coll.Collective, procs int, bytes int64) (float64, error) {
	w, err := onedevice.PlanWork(c, procs, bytes, o.Fuse)
	if err != nil {
		return 0, err
	}
	if o.MemGBps <= 0 {
		return 0, fmt.Errorf("tune: one-device memory rate %v GB/s", o.MemGBps)
	}
	return o.CallUS + o.OpUS*float64(w.Ops) + float64(w.Read+w.Written)/(o.MemGBps*1e3), nil
}
