/*
 * crossread.c: the cross-memory kernels (crossread.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "crossread.h"
#include "reduce.h"

int gx_cross_read(void *dst, int64_t pid, uint64_t addr, size_t n)
{
	char *d = dst;

	if (pid == 0) {
		memcpy(dst, (const void *)(uintptr_t)addr, n);
		return 0;
	}
	/* The kernel may stop short (it copies page by page and a read
	 * crossing into an unmapped page ends there): go on from where it
	 * stopped, and take a read of nothing as the fault it is. */
	while (n > 0) {
		struct iovec local = {d, n};
		struct iovec remote = {(void *)(uintptr_t)addr, n};
		ssize_t got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (got == 0)
			return EFAULT;
		d += got;
		addr += (uint64_t)got;
		n -= (size_t)got;
	}
	return 0;
}

int gx_cross_write(int64_t pid, uint64_t addr, const void *src, size_t n)
{
	const char *s = src;

	if (pid == 0) {
		memmove((void *)(uintptr_t)addr, src, n);
		return 0;
	}
	while (n > 0) {
		struct iovec local = {(void *)s, n};
		struct iovec remote = {(void *)(uintptr_t)addr, n};
		ssize_t put = process_vm_writev((pid_t)pid, &local, 1, &remote, 1, 0);
		if (put < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (put == 0)
			return EFAULT;
		s += put;
		addr += (uint64_t)put;
		n -= (size_t)put;
	}
	return 0;
}

int gx_cross_reduce(void *dst, const gx_xsrc_t *srcs, int nsrc,
		    const gx_xsrc_t *outs, int nout, size_t n, int dtype,
		    int op, size_t esize, void *in, size_t piece)
{
	gx_reduce_fn f = gx_reduce_kernel(dtype, op);
	char *d = dst;

	if (f == NULL || esize == 0 || nsrc < 1)
		return -1;
	piece -= piece % esize;
	if (piece == 0)
		return -1;
	for (size_t off = 0; off < n; off += piece) {
		size_t m = n - off < piece ? n - off : piece;
		int rc = 0;
		/* The first operand into dst (nothing to do when it is dst). */
		if (srcs[0].pid != 0 || (char *)(uintptr_t)srcs[0].addr != d)
			rc = gx_cross_read(d + off, srcs[0].pid, srcs[0].addr + off, m);
		for (int q = 1; rc == 0 && q < nsrc; q++) {
			const void *operand = (const void *)(uintptr_t)(srcs[q].addr + off);
			if (srcs[q].pid != 0) {
				rc = gx_cross_read(in, srcs[q].pid, srcs[q].addr + off, m);
				operand = in;
			}
			if (rc == 0)
				f(d + off, operand, m / esize);
		}
		for (int o = 0; rc == 0 && o < nout; o++)
			rc = gx_cross_write(outs[o].pid, outs[o].addr + off, d + off, m);
		if (rc != 0)
			return rc;
	}
	return 0;
}
