#!/usr/bin/env bash
# in_node.sh: one MPI rank of a job across the testbed's nodes
# (tests/netns/testbed.sh): it runs CMD in its node's network namespace,
# with the node's rails as UCX's network devices, as a rank of a cluster
# runs on its node and uses its NICs.
#
#   mpirun -np N ... tests/netns/in_node.sh CMD ARGS...
#
# Environment (pass it with mpirun -x): PREFIX (the testbed's, gn), PPN
# (ranks a node, 2), RAILS (rails a node, 2), RELAY (the pmixrelay binary,
# build/pmixrelay), UCX_TLS (default self,tcp; with GPU buffers
# self,tcp,cuda_copy: below says why). Rank r (OMPI_COMM_WORLD_RANK, else PMIX_RANK) is local
# rank r % PPN of node r / PPN: it runs in namespace PREFIX-node<r/PPN>
# with UCX_NET_DEVICES naming the node's rails. The job's PMIx server listens
# on the loopback of mpirun's namespace, which a node namespace cannot
# reach: the first rank of a node starts a relay of its port into the
# node's namespace (tests/netns/pmixrelay), and every rank waits for it.
# Root only (ip netns exec). The team layer takes ranks of different
# namespaces for ranks of different nodes (team/nodename.go).
set -euo pipefail
PREFIX=${PREFIX:-gn}
PPN=${PPN:-2}
RAILS=${RAILS:-2}
RELAY=${RELAY:-build/pmixrelay}
r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}
[ -n "$r" ] || { echo "in_node.sh: no rank (run under mpirun)" >&2; exit 2; }
[ $# -ge 1 ] || { echo "in_node.sh: no command" >&2; exit 2; }
k=$((r / PPN))
ns=$PREFIX-node$k
# The PMIx server's port(s), from the URIs mpirun hands its ranks.
ports=$(env | sed -n 's/^PMIX_SERVER_URI[0-9]*=.*tcp4:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' | sort -u)
for p in $ports; do
  ready=/tmp/pmixrelay-$ns-$p
  (
    flock 9
    if [ ! -e "$ready" ]; then
      ip -n "$ns" link set lo up
      setsid "$RELAY" -netns "$ns" -port "$p" -ready "$ready" </dev/null >/dev/null 2>&1 9>&- &
    fi
  ) 9>"$ready.lock"
  for _ in $(seq 200); do [ -e "$ready" ] && break; sleep 0.05; done
  [ -e "$ready" ] || { echo "in_node.sh: no PMIx relay in $ns for port $p" >&2; exit 1; }
done
# UCX's network devices: the node's rails (not its loopback). A rail
# reaches only the same rail of the other nodes, so a rank cannot be held
# to its own one: UCX picks among them per peer.
devs=$(seq -s, -f 'rail%g' 0 $((RAILS - 1)))
export UCX_NET_DEVICES=$devs
# UCX's transports that reach only the same host, shared memory and
# cuda_ipc, tell hosts apart by IPC and PID namespace and by boot id, which
# the nodes of this testbed share: left on, they would carry traffic
# between nodes past the rails. So UCX gets TCP (the rails, and the node's
# own address inside a node) unless the caller names other transports.
export UCX_TLS=${UCX_TLS:-self,tcp}
# NCCL tells hosts apart by host id; one per node makes it use its network
# transport (sockets on the rails) between nodes, as between hosts.
export NCCL_HOSTID=${NCCL_HOSTID:-$ns} NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-$devs}
exec ip netns exec "$ns" "$@"
