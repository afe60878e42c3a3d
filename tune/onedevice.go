package tune

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/onedevice"
	"github.com/goring-hpc/goring/topo"
)

// OneDevice is what the leader algorithms cost where one process does all
// of a shared GPU's work (package onedevice): no turns of the GPU between
// processes, so neither the simulator's per-step cost of the shared-GPU
// topology nor its quarter share of the copy rate applies. The call costs
// a fixed part (the ARRIVE and FINISH messages, the buffers' keys and
// mappings looked up), a part per copy or reduction (a launch and an
// event) and its bytes at one context's rates.
type OneDevice struct {
	CallUS, OpUS float64
	// CopyGBps is bytes copied per second (each read once and written
	// once); ReduceGBps bytes reduced (read twice, written once).
	CopyGBps, ReduceGBps float64
}

// SharedH100OneDevice are the figures on one H100. The copy rate is the
// four processes' together from the h100-shared4 fit, which one context
// reaches alone; a reduction moves 3 bytes for a copy's 2, at the same
// rate of memory traffic. The fixed and per-op parts are two small UCX
// messages and a launch with its event.
var SharedH100OneDevice = OneDevice{CallUS: 30, OpUS: 5, CopyGBps: topo.SharedH100CopyGBps, ReduceGBps: topo.SharedH100CopyGBps * 2 / 3}

// predict is the leader algorithm's time for c on procs ranks of bytes.
func (o OneDevice) predict(c coll.Collective, procs int, bytes int64) (float64, error) {
	w, err := onedevice.PlanWork(c, procs, bytes)
	if err != nil {
		return 0, err
	}
	if o.CopyGBps <= 0 || o.ReduceGBps <= 0 {
		return 0, fmt.Errorf("tune: one-device rates %v / %v GB/s", o.CopyGBps, o.ReduceGBps)
	}
	return o.CallUS + o.OpUS*float64(w.Ops) + float64(w.Copied)/(o.CopyGBps*1e3) + float64(w.Reduced)/(o.ReduceGBps*1e3), nil
}
