// Package cexec runs small collectives on host memory entirely in C: the
// program of one rank, lowered from a sched.RankProgram into flat arrays,
// executed by a C state machine that posts UCX tag operations on the
// team's worker and reduces with C kernels, so that a small collective
// called from UCC never enters the Go runtime (docs/ucc.md "Small
// collectives in C").
//
// Go builds the lowered program once per call shape (Lower) and hands it
// to C; C runs every later call of that shape. The rules are exec.Machine's:
// a step is ready when its dependencies completed, and a send or receive
// also when the previous one of its (op, peer, tag) chain was posted; tags
// are ucx.MakeTag(sender, sequence, step tag). The reduction kernels
// (reduce.c) compute exactly what exec/reduce does, bit for bit, which
// reduce_test.go checks on the same inputs. UCC's in-place meaning of a
// call's two buffers has one C definition, layout.h (the Go side's is
// team/layout.go): the executor places every call with it (Layout picks
// the case at Lower), and the adapter's C path checks pointers with it.
package cexec
