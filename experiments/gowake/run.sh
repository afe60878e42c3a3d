#!/usr/bin/env bash
# gowake: the cost of entering Go from C after C has been away a while,
# without UCX, UCC or goring (docs/ucc.md "Where the time after a pause
# goes"). Builds a c-shared library with one exported function that
# increments a counter and a C program that calls it, after computing for
# each pause, twice in a row; prints the medians of 200 first and second
# calls. Needs Go and a C compiler; writes only to a temporary folder.
#
#   experiments/gowake/run.sh [pause_us ...]     # default: 100 500 5000
#   GODEBUG=schedtrace=2147483647 experiments/gowake/run.sh 5000   # the runtime's monitor kept awake
#   KEEPER=5ms experiments/gowake/run.sh 5000    # with the team layer's keeper (team/awake.go):
#                                                # a goroutine in a raw nanosleep holds a P, so sysmon never sleeps
set -euo pipefail
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cat >"$t/lib.go" <<'GO'
package main

import "C"

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

var n int

//export probe
func probe() C.int { n++; return C.int(n) }

// The keeper of team/awake.go, reduced to its loop.
func init() {
	d, err := time.ParseDuration(os.Getenv("KEEPER"))
	if err != nil {
		return
	}
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	go func() {
		for ts := syscall.NsecToTimespec(int64(d)); ; runtime.Gosched() {
			syscall.Nanosleep(&ts, nil)
		}
	}()
}

func main() {}
GO
cat >"$t/main.c" <<'CC'
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
extern int probe(void);
static double cpu_ms(const struct rusage *r) { return (r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1e3 + (r->ru_utime.tv_usec + r->ru_stime.tv_usec) / 1e3; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static volatile double sink;
static void compute(double us) { double t0 = now(), x = 1; while (now() - t0 < us) x = x * 1.0000001 + 1e-9; sink = x; }
static int cmp(const void *a, const void *b) { double d = *(const double *)a - *(const double *)b; return (d > 0) - (d < 0); }
int main(int argc, char **argv) {
    enum { N = 200 };
    double first[N], second[N], pause = argc > 1 ? atof(argv[1]) : 5000;
    probe();
    double t_start = now();
    for (int i = 0; i < N; i++) {
        compute(pause);
        double t0 = now(); probe(); first[i] = now() - t0;
        double t1 = now(); probe(); second[i] = now() - t1;
    }
    qsort(first, N, sizeof(double), cmp);
    qsort(second, N, sizeof(double), cmp);
    /* What the runtime's own threads (sysmon, the keeper) cost meanwhile:
     * the process's CPU time and voluntary context switches beyond this
     * thread's. */
    struct rusage all, me;
    getrusage(RUSAGE_SELF, &all);
    getrusage(RUSAGE_THREAD, &me);
    double secs = (now() - t_start) / 1e6;
    printf("after %6.0f us in C: first call %6.2f us (p90 %6.2f), second %5.2f us (medians of %d); "
           "runtime threads: %.1f%% of a core, %.0f wake-ups/s\n",
           pause, first[N / 2], first[N * 9 / 10], second[N / 2], N,
           (cpu_ms(&all) - cpu_ms(&me)) / (secs * 10), (all.ru_nvcsw - me.ru_nvcsw) / secs);
    return 0;
}
CC
(cd "$t" && go mod init gowake >/dev/null 2>&1 && go build -buildmode=c-shared -o libgowake.so . &&
  cc -O2 main.c -L. -lgowake -Wl,-rpath,'$ORIGIN' -o gowake)
for p in "${@:-100 500 5000}"; do
  for q in $p; do "$t/gowake" "$q"; done
done
