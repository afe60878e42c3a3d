/*
 * crossread.h: the cross-memory kernels of package crossread (the reader
 * of package crossmem's host-memory collectives). A rank reads another process's memory with
 * Linux's process_vm_readv: one kernel copy, no message, no staging.
 */
#ifndef GORING_CROSSREAD_CROSSREAD_H
#define GORING_CROSSREAD_CROSSREAD_H

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
 * gx_cross_write copies n bytes from src into addr of process pid (0:
 * this one), returning 0 or the errno that stopped it.
 */
int gx_cross_write(int64_t pid, uint64_t addr, const void *src, size_t n);

/*
 * gx_cross_reduce sets dst[0:n] to srcs[0] OP srcs[1] OP ... OP
 * srcs[nsrc-1], n bytes each, element-wise for (dtype, op) (reduce.h), and
 * writes the result to every one of outs too. It works in pieces of at
 * most piece bytes (a whole number of elements): each piece is reduced in
 * dst, the peers' operands read into in, and written out while it is in
 * cache. Only srcs[0] may be dst itself (in place); in holds piece bytes.
 * It returns 0, -1 for a (dtype, op) without kernel, or the errno of a
 * failed read or write.
 */
int gx_cross_reduce(void *dst, const gx_xsrc_t *srcs, int nsrc,
		    const gx_xsrc_t *outs, int nout, size_t n, int dtype,
		    int op, size_t esize, void *in, size_t piece);

/*
 * One job of gx_cross_run: n bytes into dst (an address of this process),
 * a copy of srcs[0] (nsrc 1) or the reduction of srcs[0..nsrc-1] in that
 * order, then written to each of outs. Addresses are integers so that Go
 * may hand C a job array that names Go memory.
 */
typedef struct {
	uint64_t dst;
	uint64_t srcs; /* the address of nsrc gx_xsrc_t */
	uint64_t outs; /* the address of nout gx_xsrc_t */
	int32_t nsrc;
	int32_t nout;
	uint64_t n;
} gx_xjob_t;

/*
 * gx_cross_run does every job, on up to threads threads: the caller and
 * the process's worker threads (started on first use, never stopped), which
 * spin a while after each run before they sleep, so that the next phase
 * of a collective finds them awake. Runs from several threads take turns.
 * It returns 0, or the first job's error (as gx_cross_reduce's).
 */
int gx_cross_run(const gx_xjob_t *jobs, int njobs, int threads, int dtype,
		 int op, size_t esize);

/* The bytes a job reduces at a time, in each thread's scratch. */
enum { GX_CROSS_PIECE = 128 << 10, GX_CROSS_MAX_THREADS = 16 };

#endif /* GORING_CROSSREAD_CROSSREAD_H */
