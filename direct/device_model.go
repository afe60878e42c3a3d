package direct

import (
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// Model is this engine as package tune prices it (tune.Leader): which
// calls run here, and the work of one, with the fusion the team layer's
// executor does (exec.MultiMax operands). tune takes it from its caller
// so that the model imports no executor.
type Model struct{}

// Runs is Runs.
func (Model) Runs(alg string, c coll.Collective, procs int) bool { return Runs(alg, c, procs) }

// Work is the ops of a call of c on procs ranks of bytes, and the bytes
// they read plus the bytes they write (PlanWork).
func (Model) Work(c coll.Collective, procs int, bytes int64) (ops int, moved int64, err error) {
	w, err := PlanWork(c, procs, bytes, exec.MultiMax)
	if err != nil {
		return 0, 0, err
	}
	return w.Ops, w.Read + w.Written, nil
}
