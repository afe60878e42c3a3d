#!/usr/bin/env bash
# tests/stack/run.sh: goring's team layer in the real stack, the one
# scripts/stack.sh builds from the pinned sources (UCC, Open MPI with
# coll/ucc, OMB; built once into a cache outside the repository, about
# 7 min on 2 cores, then reused). Without the sources it says why and passes.
#
#   tests/stack/run.sh        # NP=4 ranks by default; make test runs it
#
# 1. tests/ucc/run.sh: UCC's ucc_test_mpi through tl/goring under that
#    Open MPI's mpirun (fails on any failed case), then ucc_perftest;
# 2. OMB osu_allgather, osu_allreduce, osu_bcast and osu_alltoallv through
#    Open MPI's coll/ucc, turned on with ompi-config/ (the MCA parameter
#    file by --tune, the UCC environment file sourced): char, int and float,
#    1 B to 1 MiB, allgather and allreduce also in place, OMB's validation
#    (-c) on, every size passing. UCC's collective trace
#    (UCC_COLL_TRACE=info) must show every allgather, allreduce, bcast and
#    alltoallv (pairwise, then nimble) run by TL_GORING. osu_alltoall runs
#    too where the stack's OMB has it (scripts/stack.sh builds only the
#    four above today).
# 3. tests/stack/robust.sh: a rank 10 s late (no error, no fallback, no
#    leftovers), 1000 communicators created and freed (RSS against
#    tl/ucp's), a rank killed in a collective (the job ends).
# 4. tests/netns/ucc.sh: ucc_test_mpi through goring across two nodes of
#    the namespace testbed, each rank in its node's namespace (skipped
#    without root, ip and tc).
set -euo pipefail
cd "$(dirname "$0")/../.."
T0=$SECONDS
NP=${NP:-4}

env_file=$(scripts/stack.sh)
if [ -z "$env_file" ]; then
  echo "tests/stack: skipped: the real stack is not available (reason above)"
  exit 0
fi
# shellcheck source=/dev/null
. "$env_file"
# tests/ucc/run.sh takes mpirun (and make tl's mpicc) from PATH.
export PATH="$OMPI_PREFIX/bin:$PATH"

echo "== tests/ucc/run.sh $NP (stack: $(dirname "$env_file"))"
tests/ucc/run.sh "$NP"
# ucc_test_mpi passes on tl/ucp alone: check that UCC loads goring's layer
# (the OMB step below checks that it runs the collectives).
scores=$("$UCC_PREFIX/bin/ucc_info" -s | grep "TLs scores")
echo "ucc_info -s: $scores"
case $scores in *goring=*) ;; *) echo "tests/stack: FAILED: UCC did not load tl/goring"; exit 1 ;; esac

echo "== OMB through Open MPI's coll/ucc and tl/goring ($NP ranks)"
# UCX reads every UCX_* variable and warns about one it does not know.
export -n UCX_PREFIX
set -a
# shellcheck source=/dev/null
. ompi-config/goring-ucc-all.env
set +a
BIN=$OMB_DIR/libexec/osu-micro-benchmarks/mpi/collective
OUT=$(mktemp -d)
MPIRUN=("$OMPI_PREFIX/bin/mpirun" -np "$NP" --allow-run-as-root --oversubscribe
  --tune "$PWD/ompi-config/goring-mca-params.conf" -x UCC_TL_GORING_TUNE -x UCC_COLL_TRACE=info)
fail=0
# omb COLL [OPTION]: one benchmark, char, int and float, validated; checks
# which team layer UCC's trace (rank 0) names for each COLL:
#   coll_init: Allreduce sum: src=...; CL_BASIC {TL_GORING}, team_id 32768
# ALG=NAME omb alltoallv runs it with UCC_TL_GORING_ALG_ALLTOALLV=NAME.
omb() {
  local c=$1 opt=${2:-} t=$SECONDS rows bad n gor others extra=()
  local log=$OUT/osu_$c$opt${ALG:-}.txt
  if [ -n "${ALG:-}" ]; then
    extra=(-x "UCC_TL_GORING_ALG_ALLTOALLV=$ALG")
  fi
  # shellcheck disable=SC2086 # $opt: no option or one
  if ! "${MPIRUN[@]}" "${extra[@]}" "$BIN/osu_$c" -c -T all -m 1:1048576 -i 20 -x 5 $opt >"$log" 2>&1; then
    echo "FAIL osu_$c $opt: exit status non-zero; last lines:"; tail -n 20 "$log"; fail=1; return
  fi
  rows=$(grep -cE '^[0-9]+ .*Pass' "$log" || true)
  bad=$(grep -cE '^[0-9]+ .*Fail' "$log" || true)
  grep -i "coll_init: $c[:; ]" "$log" | sed -n 's/.*; CL_[A-Z_]* {\([^}]*\)}, team_id.*/\1/p' >"$log.tl" || true
  n=$(wc -l <"$log.tl")
  gor=$(grep -cx TL_GORING "$log.tl" || true)
  others=$(grep -vx TL_GORING "$log.tl" | sort | uniq -c | awk '{printf " %s x%s", $2, $1}' || true)
  echo "osu_$c $opt${ALG:+ (ALG_ALLTOALLV=$ALG)}: $rows rows validated, $bad failed; UCC ran $n $c: $gor on TL_GORING,${others:- none other} ($((SECONDS - t)) s)"
  if [ "$bad" != 0 ] || [ "$rows" = 0 ]; then
    echo "FAIL osu_$c $opt: OMB validation"; grep -E '^#|^[0-9]' "$log" | head -30; fail=1
  else
    [ "$n" -gt 0 ] && [ "$gor" = "$n" ] || { echo "FAIL osu_$c $opt: not every $c ran on TL_GORING"; fail=1; }
  fi
}
omb allgather
omb allgather -l
omb allreduce
omb allreduce -l
omb bcast
omb alltoallv
ALG=nimble omb alltoallv
if [ -x "$BIN/osu_alltoall" ]; then
  omb alltoall
fi

# The shipped selection (ompi-config/goring-ucc.env, every setting) must
# parse, and send a host allreduce of 4 MiB where goring's claims say:
# to goring where they name host allreduce (crossmem=auto, where a rank
# has two cores or more: not on the 2-core development machine), else to
# UCC's own layers (goring takes CUDA buffers from 4 MiB there); goring's
# model must have run on the team (its debug line).
sel=$(sed -n 's/^UCC_TL_GORING_TUNE=//p' ompi-config/goring-ucc.env)
log=$OUT/selected.txt
# shellcheck disable=SC2046 # the file's settings are words without spaces
if ! "$OMPI_PREFIX/bin/mpirun" -np "$NP" --allow-run-as-root --oversubscribe \
  --tune "$PWD/ompi-config/goring-mca-params.conf" $(scripts/ucc_env_args.sh ompi-config/goring-ucc.env) -x UCC_COLL_TRACE=info \
  -x UCC_TL_GORING_LOG_LEVEL=debug "$BIN/osu_allreduce" -m 4194304:4194304 -i 5 -x 2 >"$log" 2>&1; then
  echo "FAIL goring-ucc.env: osu_allreduce failed"; tail -n 20 "$log"; fail=1
elif grep -iE "failed to parse|invalid" "$log"; then
  echo "FAIL goring-ucc.env: UCC refused UCC_TL_GORING_TUNE=$sel"; fail=1
elif ! grep -qi "coll_init: allreduce" "$log"; then
  echo "FAIL goring-ucc.env: no allreduce in UCC's trace"; fail=1
elif grep -q "goring's model on a team of $NP ranks claims [^ ]*allreduce:host" "$log" && ! grep -i "coll_init: allreduce" "$log" | grep -q TL_GORING; then
  echo "FAIL goring-ucc.env: goring claims host allreduce but the 4 MiB one ran elsewhere"; fail=1
elif ! grep -q "goring's model on a team of $NP ranks claims [^ ]*allreduce:host" "$log" && grep -i "coll_init: allreduce" "$log" | grep -q TL_GORING; then
  echo "FAIL goring-ucc.env: host allreduce at 4 MiB did not stay on UCC's own layers"; fail=1
elif ! grep -q "goring's model on a team of $NP ranks" "$log"; then
  echo "FAIL goring's model did not run on the team (no debug line)"; fail=1
else
  grep -m1 "goring's model on a team" "$log" | sed 's/.*DEBUG //'
  echo "goring-ucc.env ($sel): host allreduce at 4 MiB on $(grep -i 'coll_init: allreduce' "$log" | sed -n 's/.*{\([^}]*\)}.*/\1/p' | sort -u | tr '\n' ' ')"
fi
if [ $fail != 0 ]; then echo "tests/stack: FAILED (logs in $OUT)"; exit 1; fi
rm -rf "$OUT"
echo "== tests/stack/robust.sh $NP"
tests/stack/robust.sh "$NP"
LATE_S=1 NP=2 LAYERS=goring tests/stack/late_cpu.sh
echo "== tests/netns/ucc.sh (2 nodes of 2 ranks in network namespaces)"
UCX_PREFIX=$UCX_PREFIX tests/netns/ucc.sh # un-exported above for OMB
echo "tests/stack: passed in $((SECONDS - T0)) s"
