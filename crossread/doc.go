// Package crossread reads and writes other processes' memory for the
// host collectives of package crossmem: CrossReader is crossmem's Reader
// on Linux's process_vm_readv and process_vm_writev (crossread.c), with
// reductions done piece by piece while a piece is in cache, and a call's
// jobs shared by C worker threads (crosspool.c).
//
// Why a package of its own: it is cgo (the kernel calls, and threads
// that spin between a collective's phases, which Go's scheduler would
// park), so it cannot live in crossmem, which is pure Go; and it needs
// neither UCX nor the C executor, with which it shared package cexec.
// Its reduction kernels are cexec's reduce.c, compiled here under a name
// of its own (kernels.c), so the bits are exec/reduce's.
package crossread
