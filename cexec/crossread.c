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

int gx_cross_reduce(void *dst, const gx_xsrc_t *srcs, int nsrc, size_t n,
		    int dtype, int op, size_t esize, void *acc, void *in,
		    size_t piece)
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
		int rc = gx_cross_read(acc, srcs[0].pid, srcs[0].addr + off, m);
		if (rc != 0)
			return rc;
		for (int q = 1; q < nsrc; q++) {
			const void *operand = (const void *)(uintptr_t)(srcs[q].addr + off);
			if (srcs[q].pid != 0) {
				rc = gx_cross_read(in, srcs[q].pid, srcs[q].addr + off, m);
				if (rc != 0)
					return rc;
				operand = in;
			}
			f(acc, operand, m / esize);
		}
		memcpy(d + off, acc, m);
	}
	return 0;
}
