// Package moe is the vocabulary of Mixture-of-Experts token traffic: a
// Routing (tokens of a fixed byte size owned by ranks, each token's top-k
// expert ids, and the expert→rank placement), the buffer layouts the
// dispatch and combine collectives use (Layout), and a seeded generator of
// routings with hot experts (Generate) for the simulator, the benchmarks
// and the tests.
//
// Every rank holds the whole routing, so receive counts are computed, not
// exchanged: a framework allgathers its top-k ids (4·k bytes per token)
// before dispatch, as it must for any all-to-all-v; goring's collectives
// start from the routing. The layouts are in docs/contracts.md
// ("dispatch and combine"); a framework passes the routing to the team
// layer through goring.h's goring_moe_init ("MoE dispatch and combine
// from C").
//
// The package is pure: no cgo, no I/O, deterministic.
package moe
