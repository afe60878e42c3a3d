// Package team is goring's UCC team layer without UCC and without cgo:
// contexts, teams and their collectives, behind the C API that the
// adapter ucc_tl_goring exports (ucc_tl_goring/goring.h). The adapter converts C
// arguments and handles; everything it decides, it asks here.
//
// The objects follow UCC's:
//
//   - a Context (NewContext) owns a UCX context, the options (options.go),
//     the rendezvous worker whose card UCC publishes as the context's
//     address (rendezvous.go), the workers of teams that ended cleanly
//     (workerpool.go) and, optionally, the machine's calibration
//     (calibration.go); it keeps the Go runtime awake between calls when
//     asked (awake.go);
//   - a Team is one rank's share of a team: made lazily from the members'
//     context cards (NewLazyTeam, lazy.go), it opens its workers and
//     exchanges team cards at its first call; made eagerly (NewTeam) its
//     cards go through the caller (Card, Connect): UCC's out-of-band
//     allgather, or goring bench's coordinator, which also gives the team
//     the topology of its emulated nodes (SetTopology) and runs its
//     barriers on the team's transport (Transport). Connected, it holds the
//     transport to every peer (team.go), the push engine for CUDA buffers
//     of peers on this host, lanes (lanes.go), the watch over this host's
//     peers (watch.go), its plans and their idle executors (plans.go), and
//     the model's scores for UCC (scores.go). It runs its collectives one
//     at a time in post order;
//   - a Coll is one collective call (NewColl, coll.go): what it asks,
//     resolved for its team (a Call: its buffers' memory, its algorithm,
//     its bytes), the Runner that moves its bytes (runner.go), and the
//     memory it owns (private copies, a pooled executor). Test progresses
//     its runner without ever blocking.
//
// Select (select.go) offers a call to the team's runners in one order, the
// selection, and the first that takes it runs it: alltoallv on one Machine
// (its count exchange first where its algorithm needs it, alltoallv.go);
// MoE dispatch and combine on one Machine, planned from the routing every
// rank holds (moe.go: NewMoEColl, and MoELayout for a rank's expert rows;
// UCC has no such collective, so they come through goring.h's
// goring_moe_init);
// a node kernel per GPU (node.go, package nodeexec); the leader
// algorithms on a shared GPU (onedevice.go, package direct's device
// backend); a host call by reading the peers' memory (crossmem.go, package
// direct's host backend; both run by directRunner, direct.go); the
// sched program on several lanes (lanes.go); the sched program on one
// Machine (machine.go), which takes every call. A runner that finds, on
// every rank alike and with nothing written, that it cannot run the call
// hands it to the next runner of the selection that takes it. A new
// engine is a Runner and one named entry of the selection; a call's
// Algorithm and Runner say what runs it (goring bench --alg auto reports
// both).
//
// Small host calls whose shape ran before do not reach this package at
// all: the adapter's C code runs them (cpath.go decides which shapes go
// there, and lists a team's C side in the adapter's CPathTable).
//
// Errors carry a kind (errors.go) that StatusOf maps onto goring.h's
// status: whatever goring does not run is NotSupported, so that UCC hands
// the call to another team layer.
//
// The package has no cgo of its own; it drives the packages that bind C
// (ucx, cuda, cexec) through their Go APIs.
package team
