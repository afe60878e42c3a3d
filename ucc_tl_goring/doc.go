//go:build ucc

// Command ucc_tl_goring is the Go side of goring's UCC team layer, built
// as a shared library (go build -buildmode=c-shared -tags ucc) that
// implements the C API of goring.h (in this folder: its implementer's).
// The C shim in cshim/ registers
// the team layer "goring" with UCC and forwards each UCC entry point to
// one call here; this side knows nothing of UCC and the shim knows nothing
// of schedules.
//
// It is a thin cgo adapter over package team, which holds the layer's
// logic: capi.go converts each exported function's C arguments (handles,
// enums, alltoallv's arrays, the caller's buffers) into team's types and
// team's errors into goring_status_t; handles.go maps the 64-bit handles
// C holds onto Go objects (C never holds a Go pointer); errors.go keeps
// the text of goring_last_error; moe.go exports goring_moe_init and
// goring_moe_layout, reading an MoE routing out of C memory; cpath.go lists a team in the table of
// cpath.c, the C path that runs repeated small host calls without
// entering Go, and keys a call as cpath.c does.
//
// Panics never cross into C: every exported function recovers and returns
// GORING_ERR_INTERNAL with the panic in goring_last_error.
//
// Build tag ucc keeps this package (a main package of exported C
// functions) out of plain builds; it needs no UCC itself: tests/capi runs
// the C API under mpirun without UCC.
package main

// main is required of a c-shared build and never runs.
func main() {}
