#!/usr/bin/env bash
# shellcheck disable=SC2153 # UCC_PREFIX and UCX_PREFIX come from the environment
# ucc.sh: UCC's ucc_test_mpi through goring's team layer across the
# testbed's nodes, under mpirun: NODES namespaces of PPN ranks, RAILS rails
# a node at RATE (tests/netns/testbed.sh), every rank started in its node's
# namespace on its rail (tests/netns/in_node.sh), host memory. Needs root,
# ip and tc, and the stack (UCC_SRC, UCC_PREFIX, UCX_PREFIX: tests/ucc/run.sh
# says how); without them it says why and exits 0.
#
#   UCC_SRC=... UCC_PREFIX=... UCX_PREFIX=... tests/netns/ucc.sh
#
# Checks: goring's team placed the ranks on NODES nodes (every rank's
# GORING_TEAM_PLACEMENT line), ucc_test_mpi reports 0 failures for
# allgather, allreduce, reduce_scatter, bcast and alltoallv forced onto
# goring, and the rails carried bytes. The testbed is removed on any exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
for v in UCC_SRC UCC_PREFIX UCX_PREFIX; do
  [ -n "${!v:-}" ] || { echo "tests/netns/ucc: skipped: $v is not set"; exit 0; }
done
[ "$(id -u)" = 0 ] || { echo "tests/netns/ucc: skipped: needs root"; exit 0; }
if ! { command -v ip >/dev/null && command -v tc >/dev/null; }; then echo "tests/netns/ucc: skipped: needs ip and tc"; exit 0; fi
export PREFIX=${PREFIX:-gucc} NODES=${NODES:-2} PPN=${PPN:-2} RAILS=${RAILS:-2} RATE=${RATE:-1gbit}
NP=$((NODES * PPN))
TB=$ROOT/tests/netns/testbed.sh
"$TB" down >/dev/null 2>&1 || true
# The relays of the PMIx port (in_node.sh) end with the testbed.
trap 'pkill -f "pmixrelay -netns $PREFIX-" || true; rm -f /tmp/pmixrelay-"$PREFIX"-*; "$TB" down >/dev/null 2>&1 || echo "tests/netns/ucc: testbed $PREFIX not removed" >&2' EXIT
"$TB" up >/dev/null || { echo "tests/netns/ucc: skipped: the testbed did not come up here"; exit 0; }
make tl-install UCC_SRC="$UCC_SRC" UCC_PREFIX="$UCC_PREFIX" UCX_PREFIX="$UCX_PREFIX" >/dev/null
go build -o build/pmixrelay ./tests/netns/pmixrelay
export RELAY=$ROOT/build/pmixrelay
export -n UCX_PREFIX
export LD_LIBRARY_PATH="$UCC_PREFIX/lib:$UCX_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export UCC_TL_GORING_TUNE=allgather,allreduce,reduce_scatter,bcast,alltoall,alltoallv:inf GORING_TEAM_PLACEMENT=1
log=$(mktemp)
before=$("$TB" sent rails)
# Open MPI's own traffic stays on shared memory; UCC and goring use UCX,
# whose network device is each rank's rail.
mpirun -np "$NP" --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader \
  -x LD_LIBRARY_PATH -x UCC_TL_GORING_TUNE -x GORING_TEAM_PLACEMENT -x PREFIX -x PPN -x RAILS -x RELAY \
  "$ROOT/tests/netns/in_node.sh" "$UCC_PREFIX/bin/ucc_test_mpi" \
  -c allgather,allreduce,reduce_scatter,bcast,alltoallv -t world,half -M host \
  -d int32,float32,float64 -m 1:1048576 -i 2 >"$log" 2>&1 || { head -60 "$log"; exit 1; }
after=$("$TB" sent rails)
# sent[r]: what rail r carried during the test.
declare -A sent
total=0
while read -r r b; do sent[${r#rail}]=$b; done <<<"$before"
while read -r r b; do r=${r#rail}; sent[$r]=$((b - ${sent[$r]:-0})); total=$((total + sent[$r])); done <<<"$after"
fail=0
sed -n '/TEST REPORT/,/elapsed/p' "$log"
grep -q 'failed: *0' "$log" || { echo "tests/netns/ucc: ucc_test_mpi reports failures"; fail=1; }
n=$(grep -c "goring team: rank [0-9]* of $NP, $NODES node(s) of $PPN rank(s)" "$log" || true)
[ "$n" -ge "$NP" ] || { echo "tests/netns/ucc: $n of $NP ranks placed their world team on $NODES nodes:"; grep 'goring team:' "$log" | head; fail=1; }
[ "$total" -gt 0 ] || { echo "tests/netns/ucc: the rails carried nothing"; fail=1; }
# Every rail of a node is used: goring's context stripes large messages
# over all the rails UCX_NET_DEVICES names (team/stripe.go); with UCX's
# default one rail carried everything.
for ((r = 0; r < RAILS; r++)); do
  [ $((sent[$r] * RAILS * 4)) -ge "$total" ] || { echo "tests/netns/ucc: rail $r carried ${sent[$r]} of $total bytes (under a quarter of its share)"; fail=1; }
done
echo "tests/netns/ucc: $NP ranks on $NODES nodes of $PPN, $RAILS rails at $RATE: $n team placements on $NODES nodes, $total bytes on the rails ($(for ((r = 0; r < RAILS; r++)); do printf 'rail%d %d ' $r "${sent[$r]}"; done| sed 's/ $//'))"
rm -f "$log"
exit $fail
