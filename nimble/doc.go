// Package nimble is NIMBLE's min-congestion planner (docs/papers.md,
// NIMBLE; section IV-B) for a whole demand matrix of point-to-point or
// alltoallv traffic: PlanMWU spreads every demand larger than the split
// threshold (section V-B) over its direct path, 2-hop paths through
// another GPU of its node and rail-matched paths between nodes, by
// multiplicative weights, so that the most loaded link of the cluster
// carries as little as possible. What the paper's text copy lost, and how
// it is rebuilt, is in mwu.go's comment and docs/nimble.md.
//
// sched's alltoallv algorithm "nimble" (sched/alg_alltoallv_nimble.go)
// turns a plan into per-rank programs; sim/nimble_test.go reproduces the
// paper's hotspot runs in the flow simulator.
//
// The package is pure: no cgo, no I/O, deterministic.
package nimble
