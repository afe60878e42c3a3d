#!/usr/bin/env bash
# A multi-node, multi-rail cluster on one machine, made of network
# namespaces (docs/netns.md). Root, iproute2 and tc only.
#
#   testbed.sh up      build it (cleaning leftovers of the same PREFIX first)
#   testbed.sh down    remove it
#   testbed.sh status  list its namespaces, addresses and qdiscs
#   testbed.sh run K CMD...   run CMD inside node K's namespace
#   testbed.sh ping    check every rail between every pair of nodes
#   testbed.sh sent    bytes each node's rails have sent so far, a line each:
#                      nodeK/railR BYTES (tc's counter of the rail's qdisc)
#   testbed.sh sent rails   the same summed over the nodes: railR BYTES
#   testbed.sh sent total   the same summed over everything: BYTES
#   testbed.sh with CMD...    up, run CMD in the root namespace, down
#                              (teardown always runs, also after a failure)
#
# Parameters (environment):
#   PREFIX=gn     namespace names: PREFIX-sw (the rails' bridges), PREFIX-node0..
#   NODES=2       node namespaces
#   RAILS=2       rails: one bridge each, one veth per node on each
#   RATE=250mbit  each rail's rate, per direction (tc tbf on both veth ends)
#   DELAY=        optional netem delay per direction (e.g. 100us)
#   LOSS=         optional netem loss per direction (e.g. 0.1%)
#   MTU=9000      the veths' MTU (jumbo frames, as HPC fabrics use)
#   QUEUE=20ms    the most a packet may wait in a rail's token bucket (tbf latency)
#
# Node k's rail r is the device "railr" in PREFIX-nodek with address
# 198.18.r.(k+1)/24 (RFC 2544's benchmarking range; each rail its own /24,
# so the kernel's connected routes keep rail r's traffic on rail r). The
# namespaces have no route anywhere else and no link to the root namespace:
# nothing they send can leave them.
set -euo pipefail

PREFIX=${PREFIX:-gn}
NODES=${NODES:-2}
RAILS=${RAILS:-2}
RATE=${RATE:-250mbit}
DELAY=${DELAY:-}
LOSS=${LOSS:-}
MTU=${MTU:-9000}
QUEUE=${QUEUE:-20ms}

die() { echo "testbed: $*" >&2; exit 1; }

# Carried iproute2 (scripts/carry_iproute2.sh) where the machine has none.
carried=$(cd "$(dirname "$0")/../.." && pwd)/.carry/iproute2
if ! command -v ip >/dev/null && [ -x "$carried/bin/ip" ]; then
  export PATH=$carried/bin:$PATH LD_LIBRARY_PATH=$carried/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

check_params() {
  [[ $PREFIX =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "PREFIX=$PREFIX: want 1-8 lower-case letters and digits, starting with a letter"
  [[ $NODES =~ ^[0-9]+$ && $NODES -ge 1 && $NODES -le 64 ]] || die "NODES=$NODES: want 1..64"
  [[ $RAILS =~ ^[0-9]+$ && $RAILS -ge 1 && $RAILS -le 16 ]] || die "RAILS=$RAILS: want 1..16"
  [[ $RATE =~ ^[0-9]+(\.[0-9]+)?[kmg]?bit$ ]] || die "RATE=$RATE: want a tc rate such as 500mbit"
  [ "$(id -u)" = 0 ] || die "must run as root (ip netns)"
if ! { command -v ip >/dev/null && command -v tc >/dev/null; }; then die "needs ip and tc (apt-get install iproute2)"; fi
}

sw() { echo "$PREFIX-sw"; }
node() { echo "$PREFIX-node$1"; }

# ours lists the namespaces of this PREFIX (leftovers of a crash included).
ours() { ip netns list | awk '{print $1}' | grep -E "^$PREFIX-(sw|node[0-9]+)$" || true; }

down() {
  local ns pids left
  for ns in $(ours); do
    # A rank that outlived a killed run holds its namespace (and the veths
    # in it) alive after the delete: end what still runs inside first,
    # politely, then for good.
    pids=$(ip netns pids "$ns" 2>/dev/null)
    if [ -n "$pids" ]; then
      # shellcheck disable=SC2086 # one pid a word
      kill $pids 2>/dev/null
      for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
        sleep 0.2
      done
      pids=$(ip netns pids "$ns" 2>/dev/null)
      # shellcheck disable=SC2086
      [ -z "$pids" ] || kill -9 $pids 2>/dev/null
    fi
    # Deleting a namespace deletes its veth ends, and their peers with them.
    ip netns delete "$ns" 2>/dev/null || true
  done
  left=$(ours)
  [ -z "$left" ] || die "down: namespaces left behind: $left"
}

# shape puts the rail's rate (and optional delay/loss) on dev's egress in ns:
# a token bucket at RATE, netem below it when asked.
shape() {
  local ns=$1 dev=$2
  # burst: at least one maximal GSO packet, else tbf drops it.
  ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: tbf rate "$RATE" burst 256kb latency "$QUEUE"
  if [ -n "$DELAY$LOSS" ]; then
    local args=()
    [ -n "$DELAY" ] && args+=(delay "$DELAY")
    [ -n "$LOSS" ] && args+=(loss "$LOSS")
    ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:1 handle 10: netem "${args[@]}" limit 100000 ||
      die "DELAY/LOSS need tc's netem, which this kernel lacks (no sch_netem)"
  fi
}

up() {
  down
  # A half-built testbed is removed on any failure (see on_exit).
  teardown=1
  ip netns add "$(sw)"
  ip -n "$(sw)" link set lo up
  ip netns exec "$(sw)" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  local k r
  for ((r = 0; r < RAILS; r++)); do
    ip -n "$(sw)" link add "br$r" type bridge
    ip -n "$(sw)" link set "br$r" up
  done
  for ((k = 0; k < NODES; k++)); do
    ip netns add "$(node "$k")"
    ip -n "$(node "$k")" link set lo up
    # IPv4 only: no IPv6 link-local chatter on the rails.
    ip netns exec "$(node "$k")" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    for ((r = 0; r < RAILS; r++)); do
      ip -n "$(node "$k")" link add "rail$r" mtu "$MTU" type veth peer name "n${k}r$r" mtu "$MTU" netns "$(sw)"
      ip -n "$(sw)" link set "n${k}r$r" master "br$r" up
      ip -n "$(node "$k")" addr add "198.18.$r.$((k + 1))/24" dev "rail$r"
      ip -n "$(node "$k")" link set "rail$r" up
      shape "$(node "$k")" "rail$r"
      shape "$(sw)" "n${k}r$r"
    done
  done
  [ "$mode" = with ] || teardown=0
  echo "testbed $PREFIX: $NODES nodes x $RAILS rails at $RATE${DELAY:+ delay $DELAY}${LOSS:+ loss $LOSS}, MTU $MTU"
}

status() {
  local ns
  for ns in $(ours); do
    echo "== $ns"
    ip -n "$ns" -br addr
    ip netns exec "$ns" tc qdisc show | grep -v 'noqueue' || true
  done
}

# sent prints the bytes every rail of every node has sent (tc's counter).
sent() {
  local k r
  for ((k = 0; k < NODES; k++)); do
    for ((r = 0; r < RAILS; r++)); do
      echo "node$k/rail$r $(tc -n "$(node "$k")" -s qdisc show dev "rail$r" | awk '/Sent/ {print $2; exit}')"
    done
  done | case ${1:-} in
    rails) sed 's|^node[0-9]*/||' | awk '{t[$1] += $2} END {for (r in t) printf "%s %.0f\n", r, t[r]}' | sort -V ;;
    total) awk '{t += $2} END {printf "%.0f\n", t}' ;;
    "") cat ;;
    *) die "usage: testbed.sh sent [rails|total]" ;;
  esac
}

# pingall checks each rail from node 0 to every other node: a TCP connect
# to a closed port is refused by the peer's kernel, which proves the path
# both ways (no ping on a bare Debian; bash's /dev/tcp is enough). A
# timeout means the rail does not reach.
pingall() {
  local k r out
  for ((k = 1; k < NODES; k++)); do
    for ((r = 0; r < RAILS; r++)); do
      out=$(ip netns exec "$(node 0)" timeout 3 bash -c "exec 3<>/dev/tcp/198.18.$r.$((k + 1))/9" 2>&1) && continue
      [[ $out == *"refused"* ]] || die "node0 cannot reach node$k on rail $r: ${out:-timeout}"
    done
  done
  echo "testbed $PREFIX: every rail reaches every node"
}

# on_exit removes the testbed when asked to: always after "with", and after
# a failure half way through "up".
teardown=0
on_exit() {
  local rc=$?
  [ "$teardown" = 1 ] && down
  exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

cmd=${1:-}
mode=$cmd
[ -n "$cmd" ] || die "usage: testbed.sh up|down|status|ping|sent [rails|total]|run K CMD...|with CMD..."
shift
check_params
case $cmd in
  up) up ;;
  down) down ;;
  status) status ;;
  ping) pingall ;;
  sent) sent "$@" ;;
  run)
    [ $# -ge 2 ] || die "usage: testbed.sh run K CMD..."
    k=$1; shift
    exec ip netns exec "$(node "$k")" "$@" ;;
  with)
    [ $# -ge 1 ] || die "usage: testbed.sh with CMD..."
    teardown=1
    up
    "$@" ;;
  *) die "unknown command $cmd: want up|down|status|ping|sent|run|with" ;;
esac
