#!/usr/bin/env bash
# tests/stack/robust.sh: goring's team layer through Open MPI's coll/ucc
# when an MPI program does what MPI allows (a late rank, many short-lived
# communicators) and when a rank dies. Needs the stack scripts/stack.sh
# builds, with tl/goring installed (tests/stack/run.sh does both and then
# calls this); tests/stack/robust.c is the MPI program.
#
#   tests/stack/robust.sh [np]          LATE="10" ROUNDS=1000 by default
#   LATE="10 30 120" tests/stack/robust.sh 4
#
# 1. late: the last rank enters an allreduce and an allgather of 1 MiB, and
#    a 16-float allreduce that runs in goring's C path, LATE seconds after
#    the others, goring forced (ompi-config/goring-ucc-all.env). Every call must return
#    correct contents after about LATE seconds, UCC's trace must show them
#    on TL_GORING, and the output must carry no timeout, no fallback and no
#    UCX warning of requests or registrations left behind.
# 2. split: ROUNDS of MPI_Comm_split + allreduce + MPI_Comm_free, timed on
#    rank 0 (best of SPLIT_RUNS, default 3): with goring forced, with goring
#    installed at its default score, and with UCC's own layers alone
#    (UCC_CL_BASIC_TLS=ucp). Rank 0's VmRSS growth with goring forced may
#    not exceed UCC's alone by more than SPLIT_SLACK_KIB (default 4096: the
#    workers and endpoints a context keeps for its next teams and the Go
#    heap's steady state, +4-5 MB after 300 rounds as after 3000, a plateau);
#    the times must stay within loose bounds of UCC's alone (below). Short
#    runs of their own check that goring ran every forced allreduce, and
#    that with goring installed its ranks declined every team after the
#    first of the same members (its model claims nothing there).
# 3. kill: the last rank kills itself while the others wait in a goring
#    allreduce; the job must end (non-zero) within KILL_LIMIT seconds.
# 5. bad option: a bad UCC_TL_GORING_* value (scores=bogus, timeout_ms=-5)
#    fails goring's context with the reason in UCC's log, and UCC runs the
#    calls on its other layers: the late program (no delay) returns correct
#    contents on TL_UCP. An unreadable UCC_TL_GORING_TUNE (garbage) is
#    named in UCC's log, and the calls are correct.
# 4. pause (a measurement, not a pass/fail check): PAUSE_CALLS 16-float
#    allreduces each after 5 ms of computation, on PAUSE_NP ranks (default
#    2: more ranks than cores would time the scheduler), with goring forced
#    and on UCC's own layers; prints the medians and goring's ratio to
#    tl/ucp.
set -euo pipefail
cd "$(dirname "$0")/../.."
NP=${1:-4}
LATE=${LATE:-10}
ROUNDS=${ROUNDS:-1000}
SPLIT_SLACK_KIB=${SPLIT_SLACK_KIB:-4096}
KILL_LIMIT=${KILL_LIMIT:-60}
for v in OMPI_PREFIX UCC_PREFIX; do
  [ -n "${!v:-}" ] || { echo "tests/stack/robust: skipped: $v is not set (source the env file scripts/stack.sh prints)"; exit 0; }
done
export -n UCX_PREFIX
# mpirun's local ranks inherit its environment: goring is chosen only
# where a run passes UCC_TL_GORING_TUNE itself.
unset UCC_TL_GORING_TUNE UCC_COLL_TRACE
OUT=$(mktemp -d)
"$OMPI_PREFIX/bin/mpicc" -O2 -Wall tests/stack/robust.c -o "$OUT/robust"
MPIRUN=("$OMPI_PREFIX/bin/mpirun" -np "$NP" --allow-run-as-root --oversubscribe
  --tune "$PWD/ompi-config/goring-mca-params.conf")
TUNE=$(sed -n 's/^UCC_TL_GORING_TUNE=//p' ompi-config/goring-ucc-all.env)
fail=0

# What must never appear when a rank is merely late: goring's opt-in
# deadline, coll/ucc's fallback, UCX's complaints about leftovers at exit.
LEFTOVER='Timeout expired|fallback|timed out|not released|still in flight|rcache|memtype_cache|leak'
for s in $LATE; do
  log=$OUT/late_$s.txt t=$SECONDS
  if ! "${MPIRUN[@]}" -x UCC_TL_GORING_TUNE="$TUNE" -x UCC_COLL_TRACE=info "$OUT/robust" late "$s" >"$log" 2>&1; then
    echo "FAIL robust late $s: non-zero exit; last lines:"; tail -n 20 "$log"; fail=1; continue
  fi
  grep '^robust late' "$log"
  ran=$(grep -ciE 'coll_init: (allreduce|allgather)[:; ].*TL_GORING' "$log" || true)
  other=$(grep -iE 'coll_init: (allreduce|allgather)[:; ]' "$log" | grep -vc TL_GORING || true)
  echo "  UCC trace: $ran allreduce/allgather on TL_GORING, $other elsewhere; $((SECONDS - t)) s in all"
  if ! grep -q '^robust late.*: ok$' "$log"; then echo "FAIL robust late $s: contents"; fail=1; fi
  if [ "$ran" -lt 4 ] || [ "$other" != 0 ]; then echo "FAIL robust late $s: not every call ran on goring"; fail=1; fi
  if grep -iE "$LEFTOVER" "$log"; then echo "FAIL robust late $s: a timeout, fallback or leftover (lines above)"; fail=1; fi
  waited=$(sed -n 's/.*allreduce waited \([0-9.]*\) s, allgather \([0-9.]*\) s, small allreduce \([0-9.]*\) s.*/\1 \2 \3/p' "$log")
  [ -n "$waited" ] || { echo "FAIL robust late $s: no waiting times in the output"; fail=1; }
  for w in $waited; do
    # About s seconds: a deadline and a fallback would add seconds more.
    awk -v w="$w" -v s="$s" 'BEGIN { exit !(w >= s - 0.5 && w <= s + 3) }' ||
      { echo "FAIL robust late $s: a call waited $w s"; fail=1; }
  done
done

growth() { sed -n 's/.*(+\(-\{0,1\}[0-9]*\) KiB).*/\1/p' "$1"; }
secs() { sed -n 's/^robust split [0-9]* rounds in \([0-9.]*\) s.*/\1/p' "$1"; }
# split NAME [mpirun options]: ROUNDS communicators, best time of SPLIT_RUNS
# runs (4 ranks on 2 cores time the scheduler as much as the layers).
split() {
  local name=$1 best="" s i
  shift
  for i in $(seq "${SPLIT_RUNS:-3}"); do
    "${MPIRUN[@]}" "$@" "$OUT/robust" split "$ROUNDS" >"$OUT/split_$name.$i.txt" 2>&1 ||
      { echo "FAIL robust split ($name): non-zero exit"; tail -n 20 "$OUT/split_$name.$i.txt"; fail=1; return; }
    s=$(secs "$OUT/split_$name.$i.txt")
    if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$s; cp "$OUT/split_$name.$i.txt" "$OUT/split_$name.txt"
    fi
  done
  echo "robust split: $name $(grep '^robust split' "$OUT/split_$name.txt" | sed 's/^robust split //')"
}
split goring -x UCC_TL_GORING_TUNE="$TUNE"
split installed
split without -x UCC_CL_BASIC_TLS=ucp
g=$(growth "$OUT/split_goring.txt") u=$(growth "$OUT/split_without.txt")
# Who ran what, in short runs of their own (a trace or a log slows the
# timed ones): forced, every round's allreduce on goring; installed, every
# team after the first of its members declined by goring
# (cshim/tl_goring_idle.h), and the contents right.
CHECK_ROUNDS=40
"${MPIRUN[@]}" -x UCC_TL_GORING_TUNE="$TUNE" -x UCC_COLL_TRACE=info "$OUT/robust" split $CHECK_ROUNDS >"$OUT/split_trace.txt" 2>&1 || true
ng=$(grep -ciE 'coll_init: allreduce[:; ].*TL_GORING' "$OUT/split_trace.txt" || true)
"${MPIRUN[@]}" -x UCC_TL_GORING_LOG_LEVEL=debug "$OUT/robust" split $CHECK_ROUNDS >"$OUT/split_declined.txt" 2>&1 || true
nd=$(grep -c 'no goring team of 2 ranks' "$OUT/split_declined.txt" || true)
echo "robust split: [$ng allreduces on TL_GORING in rank 0's trace with goring forced; installed: $nd teams declined by goring's 4 ranks]"
if ! grep -q '^robust split.*0 wrong: ok$' "$OUT/split_declined.txt" || [ "$nd" -lt $((4 * (CHECK_ROUNDS - 1))) ]; then
  echo "FAIL robust split: with goring installed, its ranks made teams its model claims nothing on (or wrong contents)"; fail=1
fi
tg=$(secs "$OUT/split_goring.txt") ti=$(secs "$OUT/split_installed.txt") tu=$(secs "$OUT/split_without.txt")
if [ -z "$g" ] || [ -z "$u" ] || [ -z "$tg" ] || [ -z "$ti" ] || [ -z "$tu" ] || [ "$ng" -lt "$CHECK_ROUNDS" ]; then
  echo "FAIL robust split: no result or goring did not run every round"; fail=1
else
  if [ "$g" -gt $((u + SPLIT_SLACK_KIB)) ]; then
    echo "FAIL robust split: goring grew by $g KiB, UCC without goring by $u KiB"; fail=1
  fi
  # A team costs nothing until goring runs a collective on it (lazy teams,
  # docs/ucc.md "What a team costs"), and where goring's model claims
  # nothing its members' next teams are not made at all; when goring runs
  # a small host call, it runs on the context's shared worker in C, with
  # no exchange and no Go (docs/ucc.md "The context path"). Forced within
  # twice UCC without goring, as promised; installed with room for a
  # loaded 2-core machine (the ratios are what docs/ucc.md records). A
  # team that opened workers at creation, or exchanged cards
  # at its first call, misses them by several times.
  echo "robust split: installed/without = $(awk -v a="$ti" -v b="$tu" 'BEGIN { printf "%.2f", a / b }'), forced/without = $(awk -v a="$tg" -v b="$tu" 'BEGIN { printf "%.2f", a / b }')"
  awk -v a="$ti" -v b="$tu" 'BEGIN { exit !(a <= 1.6 * b + 0.05) }' ||
    { echo "FAIL robust split: goring installed but chosen for nothing took $ti s, UCC without goring $tu s"; fail=1; }
  awk -v a="$tg" -v b="$tu" 'BEGIN { exit !(a <= 2 * b + 0.05) }' ||
    { echo "FAIL robust split: goring forced took $tg s, UCC without goring $tu s"; fail=1; }
fi

t=$SECONDS
set +e
timeout "$KILL_LIMIT" "${MPIRUN[@]}" -x UCC_TL_GORING_TUNE="$TUNE" "$OUT/robust" kill >"$OUT/kill.txt" 2>&1
rc=$?
set -e
echo "robust kill: the job ended with status $rc after $((SECONDS - t)) s"
if [ $rc = 124 ]; then echo "FAIL robust kill: the survivors hung"; tail -n 20 "$OUT/kill.txt"; fail=1; fi
if [ $rc = 0 ] || grep -q 'allreduce returned although' "$OUT/kill.txt"; then
  echo "FAIL robust kill: a survivor's allreduce succeeded"; fail=1
fi

for bad in UCC_TL_GORING_SCORES=bogus UCC_TL_GORING_TIMEOUT_MS=-5; do
  log=$OUT/bad_${bad%%=*}.txt
  name=${bad#UCC_TL_GORING_}
  name=$(tr '[:upper:]' '[:lower:]' <<<"${name%%=*}")
  if ! "${MPIRUN[@]}" -x UCC_TL_GORING_TUNE="$TUNE" -x "$bad" -x UCC_COLL_TRACE=info "$OUT/robust" late 0 >"$log" 2>&1; then
    echo "FAIL robust bad option $bad: the program failed"; tail -n 20 "$log"; fail=1
  elif ! grep -q "goring_context_create failed.*option $name=" "$log"; then
    echo "FAIL robust bad option $bad: no reason in UCC's log"; tail -n 20 "$log"; fail=1
  elif grep -q "TL_GORING}" "$log" || ! grep -qi "coll_init: allreduce.*TL_UCP" "$log"; then
    echo "FAIL robust bad option $bad: the calls did not run on UCC's other layers"; fail=1
  else
    echo "robust bad option $bad: $(grep -m1 -o "option $name=[^:]*: want [^(]*" "$log"| head -c 90)...; the calls ran on TL_UCP, correct"
  fi
done
log=$OUT/bad_tune.txt
if ! "${MPIRUN[@]}" -x UCC_TL_GORING_TUNE=garbage "$OUT/robust" late 0 >"$log" 2>&1; then
  echo "FAIL robust bad TUNE: the program failed"; tail -n 20 "$log"; fail=1
elif ! grep -q 'UCC_TL_GORING_TUNE="garbage" is not a TUNE string' "$log"; then
  echo "FAIL robust bad TUNE: UCC's log does not name UCC_TL_GORING_TUNE"; tail -n 20 "$log"; fail=1
else
  echo "robust bad TUNE: UCC's log names UCC_TL_GORING_TUNE; the calls were correct"
fi

PAUSE_NP=${PAUSE_NP:-2} PAUSE_CALLS=${PAUSE_CALLS:-200}
pause() { # label, extra mpirun arguments...
  local label=$1 log=$OUT/pause_$1.txt; shift
  if "$OMPI_PREFIX/bin/mpirun" -np "$PAUSE_NP" --allow-run-as-root --oversubscribe \
    --tune "$PWD/ompi-config/goring-mca-params.conf" "$@" "$OUT/robust" pause "$PAUSE_CALLS" >"$log" 2>&1; then
    sed -n 's/.*computation \([0-9.]*\) us, back to back \([0-9.]*\) us.*/\1 \2/p' "$log"
  else
    echo "FAIL robust pause ($label)" >&2; tail -n 20 "$log" >&2; fail=1
  fi
}
read -r pg bg <<<"$(pause goring -x UCC_TL_GORING_TUNE="$TUNE")"
read -r pu bu <<<"$(pause ucp)"
if [ -n "${pg:-}" ] && [ -n "${pu:-}" ]; then
  echo "robust pause ($PAUSE_NP ranks, $PAUSE_CALLS calls, median us after 5 ms / back to back): goring $pg / $bg, tl/ucp $pu / $bu; goring / tl/ucp after the pause $(awk -v a="$pg" -v b="$pu" 'BEGIN { printf "%.2f", a / b }')"
fi

if [ $fail != 0 ]; then echo "tests/stack/robust: FAILED (logs in $OUT)"; exit 1; fi
rm -rf "$OUT"
echo "tests/stack/robust: passed"
