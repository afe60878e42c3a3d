#!/usr/bin/env bash
# UCC's own clients against goring's team layer (tl/goring), with a UCC that
# make stack built (`. "$(scripts/stack.sh)"`; tests/stack/run.sh does it)
# or you did: UCC_SRC (its configured, built source tree), UCC_PREFIX (its
# installation, with bin/ucc_test_mpi and bin/ucc_perftest) and UCX_PREFIX
# (the UCX it was built with). Without them it says why and
# exits 0: a test that needs what is absent skips.
#
#   UCC_SRC=... UCC_PREFIX=... UCX_PREFIX=... tests/ucc/run.sh [np]
#
# 1. builds tl/goring and installs it (with libgoring.so) into UCC's
#    component folder (make tl-install);
# 2. ucc_test_mpi with UCC_TL_GORING_TUNE raising goring's score to inf
#    for its six collectives: every team shape, dtypes and ops, in place
#    and not, 1 B .. 1 MiB (alltoall and alltoallv: 32- and 64-bit counts
#    and displacements, persistent and not, two-sided and one-sided,
#    pairwise then nimble); the run fails on any failure. Then UCC's own
#    default matrix of the six (its dtypes, ops and sizes, complex types
#    included, one-sided alltoall(v) too), with goring's trace: goring
#    must have run the one-sided alltoallv calls itself. Every case runs three iterations (-i 3): the
#    first runs in Go and lowers the small shapes of allgather, bcast,
#    allreduce, reduce_scatter and alltoall, the later two run them in
#    goring's C path;
# 3. goring's algorithms as UCC's: ucc_info -A lists them, a TUNE string
#    with @name picks one per size range (checked in goring's trace log),
#    an unknown name is refused in UCC's log and the run goes on;
#    Then tests/stack/args.c: calls whose counts disagree (an allgather's
#    dst not team size blocks, a reduction's src shorter than it reads, a
#    bcast root outside the team), and tests/stack/teams.c: two teams of
#    the same members with tl/goring the only layer (no team ids),
#    made on UCC directly, refused on every rank;
# 4. ucc_perftest, tl/ucp (UCC's default) then tl/goring, in one run
#    (columns: count, bytes, avg/min/max us).
#
# Open MPI's AVX reductions (op/avx, where built) saturate 8-bit sums that
# overflow, and ucc_test_mpi's reference is MPI's: it is turned off, so
# that 8-bit sums and products are checked too (docs/ucc.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
NP=${1:-4}
# ucc_perftest busy-polls: more ranks than cores measures the scheduler,
# not the team layer, so it runs on PERF_NP ranks (default: 2).
PERF_NP=${PERF_NP:-2}
for v in UCC_SRC UCC_PREFIX UCX_PREFIX; do
  if [ -z "${!v:-}" ]; then
    echo "tests/ucc: skipped: $v is not set (source the env file make stack prints, see docs/ucc.md)"
    exit 0
  fi
done
make tl-install UCC_SRC="$UCC_SRC" UCC_PREFIX="$UCC_PREFIX" UCX_PREFIX="$UCX_PREFIX" >/dev/null
# UCX reads every UCX_* variable of the ranks and warns about one it does not know.
export -n UCX_PREFIX
export LD_LIBRARY_PATH="$UCC_PREFIX/lib:$UCX_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
MPIRUN=(mpirun -np "$NP" --allow-run-as-root --oversubscribe --mca op ^avx -x LD_LIBRARY_PATH)
TUNE=UCC_TL_GORING_TUNE=allgather,allreduce,reduce_scatter,bcast,alltoall,alltoallv:inf

echo "== ucc_test_mpi through tl/goring ($NP ranks)"
"${MPIRUN[@]}" -x "$TUNE" "$UCC_PREFIX/bin/ucc_test_mpi" -c allgather,bcast -t world,half,reverse,odd_even \
  -M host -d int8,int32,uint64,float32,float64 -m 1:1048576 -I 2 -i 3 | sed -n '/TEST REPORT/,/elapsed/p'
"${MPIRUN[@]}" -x "$TUNE" "$UCC_PREFIX/bin/ucc_test_mpi" -c allreduce,reduce_scatter -t world,half,reverse,odd_even \
  -M host -d int16,int32,int64,uint16,uint32,uint64,float32,float64 -o sum,prod,max,min,land,lor,band,bor,bxor \
  -m 1:1048576 -I 2 -i 3 | sed -n '/TEST REPORT/,/elapsed/p'
"${MPIRUN[@]}" -x "$TUNE" "$UCC_PREFIX/bin/ucc_test_mpi" -c allreduce,reduce_scatter -t world,half \
  -M host -d int8,uint8 -o sum,prod,max,min,land,lor,band,bor,bxor -m 1:1048576 -I 2 -i 3 | sed -n '/TEST REPORT/,/elapsed/p'
for alg in pairwise nimble; do
  echo "-- alltoall, alltoallv: $alg"
  "${MPIRUN[@]}" -x "$TUNE" -x UCC_TL_GORING_ALG_ALLTOALLV=$alg "$UCC_PREFIX/bin/ucc_test_mpi" -c alltoall,alltoallv \
    -t world,half,reverse,odd_even -M host -d int8,int32,uint64,float32,float64 -m 1:1048576 \
    -C 32,64 -D 32,64 -P 2 -i 3 | sed -n '/TEST REPORT/,/elapsed/p'
done
# UCC's default matrix of goring's six collectives. One-sided alltoallv
# (UCC_COLL_ARGS_FLAG_MEM_MAPPED_BUFFERS) means other displacements than
# the two-sided call's; goring runs it (cshim/tl_goring_coll.c): a refusal
# would go to UCC's fallback, which runs tl/ucp's two-sided alltoallv on
# them (docs/ucc.md, "Alltoall and alltoallv").
log=$(mktemp)
"${MPIRUN[@]}" -x "$TUNE" -x UCC_TL_GORING_LOG_LEVEL=trace "$UCC_PREFIX/bin/ucc_test_mpi" \
  -c allgather,allreduce,reduce_scatter,bcast,alltoall,alltoallv \
  >"$log" 2>&1 || { grep -v 'TL_GORING TRACE' "$log" | tail -20; exit 1; }
grep -q 'failed: *0' "$log" || { sed -n '/TEST REPORT/,/elapsed/p' "$log"; exit 1; }
n=$(grep -c 'goring task [^ :]*: one-sided alltoallv' "$log" || true)
[ "$n" -gt 0 ] || { echo "no one-sided alltoallv ran on goring"; exit 1; }
echo "UCC's default matrix of the six: $(grep -o 'passed: *[0-9]*' "$log" | head -1), 0 failed; $n one-sided alltoallv calls ran on goring"
rm -f "$log"

echo "== counts that disagree, refused alike on every rank (tests/stack/args.c)"
ARGS_BIN=$(mktemp)
mpicc -O2 -Wall -I"$UCC_PREFIX/include" tests/stack/args.c -L"$UCC_PREFIX/lib" -lucc -o "$ARGS_BIN"
"${MPIRUN[@]}" -x "$TUNE" "$ARGS_BIN" 2>&1 | grep -v ' ERROR ' # the refusals' log lines
rm -f "$ARGS_BIN"

echo "== two teams of the same members, tl/goring without tl/ucp (tests/stack/teams.c)"
# Without tl/ucp UCC numbers no team: every team has id 0.
TEAMS_BIN=$(mktemp)
mpicc -O2 -Wall -I"$UCC_PREFIX/include" tests/stack/teams.c -L"$UCC_PREFIX/lib" -lucc -o "$TEAMS_BIN"
"${MPIRUN[@]}" -x UCC_TLS=goring,self -x UCC_TL_GORING_TUNE=allreduce:inf "$TEAMS_BIN"
rm -f "$TEAMS_BIN"

echo "== goring's algorithms as UCC's: ucc_info -A, and @name in UCC_TL_GORING_TUNE"
# Every collective goring runs lists its algorithms (cshim/tl_goring_algs.h,
# generated from sched's registry); a TUNE string picks one per size range,
# and goring's trace log says which algorithm each call ran.
algs=$("$UCC_PREFIX/bin/ucc_info" -A | sed -n '/^tl\/goring algorithms/,/^$/p')
for c in Allgather Allreduce Alltoall Alltoallv Bcast Reduce_scatter; do
  grep -q "^  $c\$" <<<"$algs" || { echo "ucc_info -A lists no tl/goring algorithms for $c"; exit 1; }
done
echo "ucc_info -A: $(grep -c ' : ' <<<"$algs") tl/goring algorithms over 6 collectives"
log=$(mktemp)
sel='allreduce:0-4K:@recursive_doubling:inf#allreduce:4K-inf:@ring:inf#allgather:0-inf:@bruck:inf'
"${MPIRUN[@]}" -x "UCC_TL_GORING_TUNE=$sel" -x UCC_TL_GORING_LOG_LEVEL=trace "$UCC_PREFIX/bin/ucc_test_mpi" \
  -c allreduce,allgather -t world -M host -d int32 -o sum -m 1024:65536 -I 1 >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
ran=$(grep -o 'goring task [^:]*: [a-z_]*' "$log" | awk '{print $NF}' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
echo "TUNE=$sel: ran ${ran}"
# ucc_test_mpi's 1 KiB and 2 KiB allreduces go below 4K, the five larger above it.
for want in "recursive_doubling" "ring" "bruck"; do
  grep -q " $want;" <<<"$ran" || { echo "no call ran $want"; exit 1; }
done
grep -q 'failed: *0' "$log" || { sed -n '/TEST REPORT/,/elapsed/p' "$log"; exit 1; }
if grep -o 'goring task [^:]*: [a-z_]*' "$log" | awk '{print $NF}' | grep -qv '^recursive_doubling$\|^ring$\|^bruck$'; then
  echo "a call ran an algorithm the TUNE string did not name"; exit 1
fi
"${MPIRUN[@]}" -x "UCC_TL_GORING_TUNE=allreduce:0-inf:@nosuch:inf" "$UCC_PREFIX/bin/ucc_test_mpi" \
  -c allreduce -t world -M host -d int32 -o sum -m 1024 -I 1 >"$log" 2>&1 || true
grep -q 'incorrect algorithm id provided: nosuch' "$log" || { echo "an unknown @name was not refused with UCC's reason"; tail -5 "$log"; exit 1; }
grep -q 'failed: *0' "$log" || { echo "an unknown @name broke the run instead of leaving goring's default"; tail -5 "$log"; exit 1; }
echo "TUNE=...@nosuch: refused in UCC's log ($(grep -o 'incorrect algorithm id provided: nosuch' "$log" | head -1)); the run passed on the other layers"
# The leader algorithms in their message form (host memory; on a shared GPU
# they run as one process's device work, docs/gpu.md), every collective
# that has one, named by @leader, on whole and split teams.
sel='allgather:0-inf:@leader:inf#allreduce:0-inf:@leader:inf#reduce_scatter:0-inf:@leader:inf#bcast:0-inf:@leader:inf'
"${MPIRUN[@]}" -x "UCC_TL_GORING_TUNE=$sel" -x UCC_TL_GORING_LOG_LEVEL=trace "$UCC_PREFIX/bin/ucc_test_mpi" \
  -c allgather,allreduce,reduce_scatter,bcast -t world,half,odd_even -M host -d int32,float64 -o sum,max -m 1:65536 -I 1 >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
grep -q 'failed: *0' "$log" || { sed -n '/TEST REPORT/,/elapsed/p' "$log"; exit 1; }
n=$(grep -c 'goring task [^:]*: leader' "$log" || true)
[ "$n" -gt 0 ] || { echo "no call ran the leader algorithms"; exit 1; }
echo "TUNE=...@leader: $n calls on the leader algorithms, $(grep -o 'passed: *[0-9]*' "$log" | head -1), 0 failed"
rm -f "$log"

# Cross-memory reads (UCC_TL_GORING_CROSSMEM=2, every size: cpath_max 0):
# the ranks are sibling processes, which must read each other's buffers
# (the verdict), not fall back to messages; in place and not, every team
# shape. Goring's trace says at finalize what each task ran.
echo "== cross-memory reads: allreduce and allgather with UCC_TL_GORING_CROSSMEM=2"
# Each rank's trace is counted from its own file (--output-filename): in
# the merged output, lines of several ranks can interleave mid-line.
log=$(mktemp)
ranks=$(mktemp -d)
"${MPIRUN[@]}" --output-filename "$ranks" -x "$TUNE" -x UCC_TL_GORING_CROSSMEM=2 -x UCC_TL_GORING_CPATH_MAX=0 -x UCC_TL_GORING_LOG_LEVEL=trace \
  "$UCC_PREFIX/bin/ucc_test_mpi" -c allgather,allreduce -t world,half,reverse,odd_even -M host -d int32,float64 \
  -o sum,max,prod -m 1:1048576 -I 2 -i 2 >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
grep -q 'failed: *0' "$log" || { sed -n '/TEST REPORT/,/elapsed/p' "$log"; exit 1; }
n=$(cat "$ranks"/*/rank.*/stdout | grep -c 'goring task [^:]* ran: crossmem' || true)
other=$(cat "$ranks"/*/rank.*/stdout | grep 'goring task [^:]* ran: ' | grep -vc 'ran: crossmem' || true)
rm -rf "$ranks"
[ "$n" -gt 0 ] && [ "$other" -eq 0 ] || { echo "cross-memory reads: $n tasks ran crossmem, $other something else"; exit 1; }
echo "CROSSMEM=2: $n tasks read their peers' memory, none fell back, $(grep -o 'passed: *[0-9]*' "$log" | head -1), 0 failed"
rm -f "$log"

echo "== ucc_perftest ($PERF_NP ranks): tl/ucp (UCC's default) then tl/goring, float32 sum, 1-16 MiB"
PERF=(mpirun -np "$PERF_NP" --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH)
for tl in ucp goring; do
  for c in allgather allreduce; do
    env=(); [ "$tl" = goring ] && env=(-x "$TUNE")
    echo "-- $tl $c"
    "${PERF[@]}" "${env[@]}" "$UCC_PREFIX/bin/ucc_perftest" -c "$c" -b 262144 -e 4194304 \
      -d float32 -o sum -m host -n 100 -w 10 | grep -E '^\s+[0-9]'
  done
done
