// Package choose is goring's one answer to "which algorithm": given the
// shape of a call (collective, bytes, memory, the team's ranks, hosts and
// GPUs, and which of goring's device engines carry it), Auto names the
// algorithm goring runs, the one to fall back on where that cannot serve
// the shape, and the pieces its transfers pipeline in.
//
// The answer comes from one table of measured rules (Table, table.go),
// in the manner of NCCL's tuning: each row is one measurement's verdict,
// with where it was measured, and the first row that matches the shape
// decides. Where no row was measured for a shape (device memory across
// hosts), the model decides: the cheapest of the collective's registered
// algorithms by the simulator's cost table (model.CostTable, filled by
// package sim on the shape's topology; Costs); a caller that gives no
// model (the team layer beyond ModelMaxRanks ranks, whose calls cannot
// wait for the simulations) gets the collective's Base. The model does not
// override a row: asked for goring's best where rows exist, it ranks
// goring's own algorithms differently from the measurements (docs/ucc.md
// "Default scores from the model").
//
// "auto" means Auto everywhere it is accepted: a call or a context
// option of the UCC team layer that names no algorithm or names auto
// (package team), goring plan and goring sim with --alg auto, and goring
// bench with --alg auto, whose calls name none and run through the team. The
// scores (package tune) predict the same choice: the team layer hands
// its chooser to tune.Claims, and goring model scores hands the one of a
// one-host team it cannot ask (OneHost, Shape.Claim: onehost.go).
//
// The package is pure: no cgo, no I/O. It asks package direct only
// whether the shared GPU's one-process engine serves a call
// (direct.Serves), the condition of the leader row.
package choose
