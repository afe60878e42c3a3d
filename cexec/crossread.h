/*
 * crossread.h: cross-memory kernels of package cexec (package crossmem's
 * host-memory collectives). A rank reads another process's memory with
 * Linux's process_vm_readv: one kernel copy, no message, no staging.
 */
#ifndef GORING_CEXEC_CROSSREAD_H
#define GORING_CEXEC_CROSSREAD_H

#include <stddef.h>
#include <stdint.h>

/* One operand of a reduction: n bytes at addr of process pid, or of this
 * process where pid is 0 (read with memcpy). */
typedef struct {
	int64_t pid;
	uint64_t addr;
} gx_xsrc_t;

/*
 * gx_cross_read copies n bytes at addr of process pid into dst. It
 * returns 0 or the errno that stopped it (a short read with no errno is
 * EFAULT).
 */
int gx_cross_read(void *dst, int64_t pid, uint64_t addr, size_t n);

/*
 * gx_cross_reduce sets dst[0:n] to srcs[0] OP srcs[1] OP ... OP
 * srcs[nsrc-1], n bytes each, combined in that order, element-wise for
 * (dtype, op) (reduce.h). It works in pieces of at most piece bytes (a
 * whole number of elements): each piece is reduced in acc while it is in
 * cache, the peers' operands read into in, then copied to dst, so dst may
 * be one of the local operands (in place). acc and in hold piece bytes.
 * It returns 0, -1 for a (dtype, op) without kernel, or the errno of a
 * failed read.
 */
int gx_cross_reduce(void *dst, const gx_xsrc_t *srcs, int nsrc, size_t n,
		    int dtype, int op, size_t esize, void *acc, void *in,
		    size_t piece);

#endif /* GORING_CEXEC_CROSSREAD_H */
