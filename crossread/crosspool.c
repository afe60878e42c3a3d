/*
 * crosspool.c: the worker threads of gx_cross_run (crossread.h).
 *
 * Why C threads that spin: a collective's phases are a few tens of
 * microseconds apart, and a thread that has gone to sleep takes about as
 * long to wake (longer on a virtual machine, where an idle CPU must be
 * woken through the hypervisor). Go's goroutines park their threads when
 * idle, so each phase would pay a wake-up per thread. These workers spin
 * for GX_SPIN_NS after their last job, then sleep on a futex.
 *
 * A run publishes its jobs in one 64-bit word, claim = generation (16
 * bits) | job count (24) | next job (24); a thread takes job i by moving
 * next from i to i+1 with a compare-and-swap on the whole word, so a thread
 * still looking at an earlier run's word can never take a job of a later
 * one. The caller returns once every job is done, after which no thread
 * touches that run's jobs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "crossread.h"

enum { GX_SPIN_NS = 200 * 1000 };

typedef struct {
	pthread_mutex_t turn; /* one run at a time */
	int nworkers;
	_Atomic uint64_t claim;
	_Atomic uint32_t wake; /* futex word: bumped by each run */
	_Atomic int sleepers;
	_Atomic int done;
	_Atomic int err;
	const gx_xjob_t *jobs;
	int dtype, op;
	size_t esize;
} gx_xpool_t;

static gx_xpool_t pool = {.turn = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int do_job(const gx_xjob_t *j, void *in)
{
	const gx_xsrc_t *srcs = (const gx_xsrc_t *)(uintptr_t)j->srcs;
	const gx_xsrc_t *outs = (const gx_xsrc_t *)(uintptr_t)j->outs;

	if (j->nsrc == 1 && j->nout == 0)
		return gx_cross_read((void *)(uintptr_t)j->dst, srcs[0].pid, srcs[0].addr, j->n);
	return gx_cross_reduce((void *)(uintptr_t)j->dst, srcs, j->nsrc, outs, j->nout, j->n,
			       pool.dtype, pool.op, pool.esize, in, GX_CROSS_PIECE);
}

/* take_jobs does jobs of generation gen until none is left. */
static void take_jobs(uint64_t gen, void *in)
{
	for (;;) {
		uint64_t c = atomic_load_explicit(&pool.claim, memory_order_acquire);
		uint64_t n = (c >> 24) & 0xffffff, i = c & 0xffffff;
		if ((c >> 48) != gen || i >= n)
			return;
		if (!atomic_compare_exchange_weak_explicit(&pool.claim, &c, c + 1, memory_order_acq_rel,
							   memory_order_acquire))
			continue;
		int rc = do_job(&pool.jobs[i], in);
		if (rc != 0) {
			int zero = 0;
			atomic_compare_exchange_strong(&pool.err, &zero, rc);
		}
		atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
	}
}

static void *worker(void *arg)
{
	char *in = aligned_alloc(64, GX_CROSS_PIECE);
	uint32_t seen = atomic_load(&pool.wake);
	(void)arg;
	/* Without its buffer a worker takes no job: the caller's thread,
	 * which takes jobs too, does them (a reduction would write to NULL). */
	if (in == NULL)
		return NULL;
	for (;;) {
		uint64_t t0 = now_ns();
		uint32_t w;
		while ((w = atomic_load_explicit(&pool.wake, memory_order_acquire)) == seen) {
			if (now_ns() - t0 < GX_SPIN_NS) {
				for (int k = 0; k < 64; k++)
					relax();
				continue;
			}
			atomic_fetch_add(&pool.sleepers, 1);
			if (atomic_load(&pool.wake) == seen)
				syscall(SYS_futex, &pool.wake, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
			atomic_fetch_sub(&pool.sleepers, 1);
			t0 = now_ns();
		}
		seen = w;
		take_jobs(atomic_load_explicit(&pool.claim, memory_order_acquire) >> 48, in);
	}
	return NULL;
}

/* grow starts workers up to n (the turn is held). */
static int grow(int n)
{
	while (pool.nworkers < n) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		int rc = pthread_create(&t, &a, worker, NULL);
		pthread_attr_destroy(&a);
		if (rc != 0)
			return rc;
		pool.nworkers++;
	}
	return 0;
}

int gx_cross_run(const gx_xjob_t *jobs, int njobs, int threads, int dtype, int op, size_t esize)
{
	static __thread char *in; /* the caller's scratch */
	static uint64_t gen;

	if (njobs <= 0)
		return 0;
	if (njobs > 0xffffff)
		return EINVAL;
	if (in == NULL && (in = aligned_alloc(64, GX_CROSS_PIECE)) == NULL)
		return ENOMEM;
	if (threads > GX_CROSS_MAX_THREADS)
		threads = GX_CROSS_MAX_THREADS;
	pthread_mutex_lock(&pool.turn);
	int rc = 0;
	if (threads > 1 && njobs > 1)
		rc = grow(threads - 1);
	if (rc != 0) {
		pthread_mutex_unlock(&pool.turn);
		return rc;
	}
	gen = (gen + 1) & 0xffff;
	pool.jobs = jobs;
	pool.dtype = dtype;
	pool.op = op;
	pool.esize = esize;
	atomic_store(&pool.done, 0);
	atomic_store(&pool.err, 0);
	atomic_store_explicit(&pool.claim, gen << 48 | (uint64_t)njobs << 24, memory_order_release);
	if (njobs > 1 && pool.nworkers > 0) {
		atomic_fetch_add(&pool.wake, 1);
		if (atomic_load(&pool.sleepers) > 0)
			syscall(SYS_futex, &pool.wake, FUTEX_WAKE_PRIVATE, threads - 1, NULL, NULL, 0);
	}
	take_jobs(gen, in);
	while (atomic_load_explicit(&pool.done, memory_order_acquire) < njobs)
		relax();
	rc = atomic_load(&pool.err);
	pthread_mutex_unlock(&pool.turn);
	return rc;
}
