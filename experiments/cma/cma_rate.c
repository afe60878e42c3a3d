/*
 * cma_rate.c: how fast this host moves bytes out of another process's
 * memory with process_vm_readv (what goring's crossmem does, one kernel
 * copy that first pins the peer's pages) against a memcpy between two of
 * its own buffers (what a copy through shared memory costs per side).
 * A measurement, not part of goring: docs/ucc.md "One thread a rank"
 * quotes it for what bounds a cross-memory allgather (goring's and Open
 * MPI's alike) on a host where the kernel's copy is the slow one.
 *
 *   gcc -O2 -Wall experiments/cma/cma_rate.c -o cma_rate && ./cma_rate BYTES [ROUNDS]
 *
 * A child process holds BYTES of a known pattern; the parent reads them
 * ROUNDS times (default 9) in rounds that alternate the two copies, each
 * round timing 20 repetitions, and prints the median of each. Every read
 * is checked: a wrong byte exits 1, a read the kernel refuses exits 3
 * (Yama, seccomp), bad arguments exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPS 20
#define MAX_ROUNDS 99

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 131 + 7);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* read_all copies n bytes at addr of process pid into dst, going on where
 * the kernel stops short; 0 or an errno. */
static int read_all(pid_t pid, char *dst, const char *addr, size_t n)
{
	while (n > 0) {
		struct iovec l = {dst, n}, r = {(void *)addr, n};
		ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? errno : EFAULT;
		dst += got;
		addr += got;
		n -= (size_t)got;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long long bytes = argc > 1 ? atoll(argv[1]) : 0;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;

	if (argc < 2 || bytes < 1 || bytes > (1LL << 32) || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: cma_rate BYTES [ROUNDS]  (1 B to 4 GiB, 1 to %d rounds)\n", MAX_ROUNDS);
		return 2;
	}
	size_t n = (size_t)bytes;
	char *src = malloc(n), *dst = malloc(n), *own = malloc(n);

	if (src == NULL || dst == NULL || own == NULL) {
		fprintf(stderr, "cma_rate: no memory for 3 x %zu bytes\n", n);
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		src[i] = (char)pattern(i);
	memcpy(own, src, n);
	pid_t child = fork();
	if (child < 0) {
		perror("cma_rate: fork");
		return 2;
	}
	if (child == 0) {
		pause(); /* holds src (copy-on-write, never written) until killed */
		_exit(0);
	}
	double cma[MAX_ROUNDS], cpy[MAX_ROUNDS];
	int rc = 0;
	for (int r = 0; r < rounds && rc == 0; r++) {
		memset(dst, 0, n);
		double t0 = now_us();
		for (int i = 0; i < REPS && rc == 0; i++)
			rc = read_all(child, dst, src, n);
		cma[r] = (now_us() - t0) / REPS;
		if (rc != 0) {
			fprintf(stderr, "cma_rate: process_vm_readv: %s\n", strerror(rc));
			rc = 3;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if ((unsigned char)dst[i] != pattern(i)) {
				fprintf(stderr, "cma_rate: byte %zu read as %u, not %u\n", i, (unsigned char)dst[i], pattern(i));
				rc = 1;
				break;
			}
		}
		memset(dst, 0, n);
		t0 = now_us();
		for (int i = 0; i < REPS; i++) {
			memcpy(dst, own, n);
			__asm__ __volatile__("" ::: "memory"); /* each copy happens */
		}
		cpy[r] = (now_us() - t0) / REPS;
		if (rc == 0 && memcmp(dst, own, n) != 0) {
			fprintf(stderr, "cma_rate: memcpy gave other bytes\n");
			rc = 1;
		}
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (rc != 0)
		return rc;
	qsort(cma, (size_t)rounds, sizeof(double), by_value);
	qsort(cpy, (size_t)rounds, sizeof(double), by_value);
	double c = cma[rounds / 2], m = cpy[rounds / 2];
	printf("cma_rate: %zu bytes, median of %d rounds: process_vm_readv %.1f us (%.1f GB/s), memcpy %.1f us (%.1f GB/s)\n",
	       n, rounds, c, (double)n / c / 1e3, m, (double)n / m / 1e3);
	return 0;
}
