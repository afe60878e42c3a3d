#!/usr/bin/env bash
# tests/stack/late_cpu.sh: the CPU a rank burns while it waits in an
# MPI_Allreduce for a late peer, and how soon it returns once the peer
# arrives, through Open MPI on each collective layer (tests/stack/late_cpu.c
# is the MPI program):
#
#   goring   coll/ucc, goring forced (ompi-config/goring-ucc-all.env's
#            UCC_TL_GORING_TUNE), UCC's trace must name TL_GORING
#   tl/ucp   coll/ucc, UCC's own layer alone (UCC_CL_BASIC_TLS=ucp), the
#            trace must name TL_UCP
#   ompi     Open MPI's own collectives (--mca coll ^ucc)
#
#   tests/stack/late_cpu.sh                       LATE_S=10 NP=2 BYTES="64 1048576" LAYERS="goring tl/ucp ompi"
#   LATE_S=10 NP=4 tests/stack/late_cpu.sh
#
# Rank 0 sleeps LATE_S seconds before the call, the others enter it at once;
# one table row per waiting rank: its time in the call, its CPU seconds
# (user + system, getrusage around the call), CPU per second waited, and
# its wake-up (rank 0's entry to this rank's return, CLOCK_MONOTONIC).
# Fails only when a result is wrong, a run fails or does not end within
# LATE_S + 120 s, or a call ran on another layer than the one named; the
# CPU figures are a measurement, not a check. tests/stack/run.sh runs it
# short (LATE_S=1 NP=2 LAYERS=goring). Needs the stack scripts/stack.sh builds with
# tl/goring installed (make tl-install, as tests/ucc/run.sh does).
set -euo pipefail
cd "$(dirname "$0")/../.."
LATE_S=${LATE_S:-10}
NP=${NP:-2}
BYTES=${BYTES:-64 1048576}
# LAYERS: which of the three to run (make test runs goring's only: a
# tl/ucp run once crashed in MPI_Finalize under load, not goring's doing).
LAYERS=${LAYERS:-goring tl/ucp ompi}
if [ -z "${OMPI_PREFIX:-}" ] || [ -z "${UCC_PREFIX:-}" ]; then
  env_file=$(scripts/stack.sh)
  if [ -z "$env_file" ]; then
    echo "tests/stack/late_cpu: skipped: the real stack is not available (reason above)"
    exit 0
  fi
  # shellcheck source=/dev/null
  . "$env_file"
fi
if [ ! -e "$UCC_PREFIX/lib/ucc/libucc_tl_goring.so" ]; then
  echo "tests/stack/late_cpu: FAILED: tl/goring is not installed in $UCC_PREFIX (make tl-install, see tests/ucc/run.sh)"
  exit 1
fi
export -n UCX_PREFIX
unset UCC_TL_GORING_TUNE UCC_COLL_TRACE UCC_CL_BASIC_TLS
OUT=$(mktemp -d)
"$OMPI_PREFIX/bin/mpicc" -O2 -Wall tests/stack/late_cpu.c -o "$OUT/late_cpu"
TUNE=$(sed -n 's/^UCC_TL_GORING_TUNE=//p' ompi-config/goring-ucc-all.env)
MPIRUN=("$OMPI_PREFIX/bin/mpirun" -np "$NP" --allow-run-as-root --oversubscribe)
UCC=(--tune "$PWD/ompi-config/goring-mca-params.conf" -x UCC_COLL_TRACE=info)
LIMIT=$(awk -v s="$LATE_S" 'BEGIN { printf "%d", s + 120.999 }')
fail=0
rows=$OUT/rows.txt
: >"$rows"

# run LAYER BYTES TL [mpirun options]: one run; TL is the team layer UCC's
# trace must name for every allreduce ("" for Open MPI's own: no UCC call).
run() {
  local layer=$1 bytes=$2 tl=$3 log rc n other
  shift 3
  log=$OUT/${layer//\//_}_$bytes.txt
  set +e
  timeout "$LIMIT" "${MPIRUN[@]}" "$@" "$OUT/late_cpu" "$LATE_S" $((bytes / 4)) >"$log" 2>&1
  rc=$?
  set -e
  if [ $rc = 124 ]; then
    echo "FAIL late_cpu $layer $bytes B: not finished after $LIMIT s"; tail -n 20 "$log"; fail=1; return
  fi
  if [ $rc != 0 ] || ! grep -q '^late_cpu: ok' "$log"; then
    echo "FAIL late_cpu $layer $bytes B: exit status $rc or a wrong result; last lines:"; tail -n 20 "$log"; fail=1; return
  fi
  n=$(grep -ciE 'coll_init: allreduce[:; ]' "$log" || true)
  if [ -n "$tl" ]; then
    other=$(grep -iE 'coll_init: allreduce[:; ]' "$log" | grep -vc "{$tl}" || true)
    if [ "$n" = 0 ] || [ "$other" != 0 ]; then
      echo "FAIL late_cpu $layer $bytes B: $n allreduces in UCC's trace, $other not on $tl"; fail=1; return
    fi
  elif [ "$n" != 0 ]; then
    echo "FAIL late_cpu $layer $bytes B: UCC ran $n allreduces with coll/ucc off"; fail=1; return
  fi
  sed -n 's/^late_cpu rank \([0-9]*\): call \([0-9.]*\) s cpu \([0-9.]*\) s user \([0-9.]*\) s sys \([0-9.]*\) s wake \([0-9]*\) us$/\1 \2 \3 \4 \5 \6/p' "$log" |
    while read -r q call cpu user sys wake; do
      echo "$layer $bytes $q $call $cpu $user $sys $wake" >>"$rows"
    done
}

for b in $BYTES; do
  for l in $LAYERS; do
    case $l in
    goring) run goring "$b" TL_GORING "${UCC[@]}" -x UCC_TL_GORING_TUNE="$TUNE" ;;
    tl/ucp) run tl/ucp "$b" TL_UCP "${UCC[@]}" -x UCC_CL_BASIC_TLS=ucp ;;
    ompi) run ompi "$b" "" --mca coll ^ucc ;;
    *) echo "late_cpu: unknown layer $l (goring, tl/ucp, ompi)"; exit 2 ;;
    esac
  done
done

echo "late_cpu: rank 0 enters MPI_Allreduce $LATE_S s late, $NP ranks, $(hostname), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
awk 'BEGIN { printf "%-8s %8s %5s %10s %8s %8s %8s %9s %11s\n", "layer", "bytes", "rank", "in call s", "cpu s", "user s", "sys s", "cpu/wait", "wake-up us" }
  { printf "%-8s %8d %5d %10.3f %8.3f %8.3f %8.3f %9.2f %11d\n", $1, $2, $3, $4, $5, $6, $7, ($4 > 0 ? $5 / $4 : 0), $8 }' "$rows"
if [ $fail != 0 ]; then echo "tests/stack/late_cpu: FAILED (logs in $OUT)"; exit 1; fi
rm -rf "$OUT"
echo "tests/stack/late_cpu: passed"
