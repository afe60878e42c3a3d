/*
 * crossread.c: the cross-memory kernels (crossread.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "crossread.h"
#include "kernels.h"

/* The kernel's calls for either direction take the same arguments. */
typedef ssize_t (*cross_fn)(pid_t, const struct iovec *, unsigned long,
			    const struct iovec *, unsigned long, unsigned long);

/* cross_all moves n bytes between local and addr of process pid with f.
 * The kernel may stop short (it copies page by page and a transfer
 * crossing into an unmapped page ends there): go on from where it
 * stopped, and take a transfer of nothing as the fault it is. */
static int cross_all(cross_fn f, char *local, int64_t pid, uint64_t addr, size_t n)
{
	while (n > 0) {
		struct iovec l = {local, n};
		struct iovec r = {(void *)(uintptr_t)addr, n};
		ssize_t done = f((pid_t)pid, &l, 1, &r, 1, 0);
		if (done < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (done == 0)
			return EFAULT;
		local += done;
		addr += (uint64_t)done;
		n -= (size_t)done;
	}
	return 0;
}

int gx_cross_read(void *dst, int64_t pid, uint64_t addr, size_t n)
{
	if (pid == 0) {
		memcpy(dst, (const void *)(uintptr_t)addr, n);
		return 0;
	}
	return cross_all(process_vm_readv, dst, pid, addr, n);
}

int gx_cross_write(int64_t pid, uint64_t addr, const void *src, size_t n)
{
	if (pid == 0) {
		memmove((void *)(uintptr_t)addr, src, n);
		return 0;
	}
	/* process_vm_writev only reads the local side. */
	return cross_all(process_vm_writev, (char *)src, pid, addr, n);
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
