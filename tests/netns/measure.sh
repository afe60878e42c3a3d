#!/usr/bin/env bash
# The testbed measurements of docs/results.md ("Real multi-node,
# multi-rail runs"): each table is one goring bench --netns on a fresh
# 4 nodes x 4 rails testbed, torn down after it whatever happens. Prints
# every command before its output, and the load average (the 2-core
# machine is shared). Needs root and bin/goring (make build).
#
#   tests/netns/measure.sh [scaling|allgather|allreduce|alltoallv|all]
set -uo pipefail  # a failed table is reported and the next one still runs
cd "$(dirname "$0")/../.."
export PREFIX=${PREFIX:-gnm} NODES=4 RAILS=4 RATE=${RATE:-250mbit}
what=${1:-all}
bed() { tests/netns/testbed.sh with "$@"; }
run() {
  echo "+ RATE=$RATE $*"
  echo "# $(uptime | sed 's/.*load/load/')"
  "$@"
}
export -f run

if [[ $what == scaling || $what == all ]]; then
  # Time against 1/rate: the rails, not the cores, set the time.
  for RATE in 125mbit 250mbit 500mbit; do
    export RATE
    bed bash -c 'for a in ring parallel_rings; do run bin/goring bench allgather --alg $a --netns $PREFIX --nodes 4 --ppn 4 --bytes 4MiB --iters 3 --warmup 1 --validate; done'
  done
  export RATE=250mbit
fi
if [[ $what == allgather || $what == all ]]; then
  bed bash -c 'run bin/goring bench allgather --alg parallel_rings --netns $PREFIX --nodes 4 --ppn 4 --bytes 1MiB:32MiB --iters 3 --warmup 1 --validate;
    run bin/goring bench allgather --alg ring --netns $PREFIX --nodes 4 --ppn 4 --bytes 1MiB:32MiB --iters 3 --warmup 1 --validate'
fi
if [[ $what == allreduce || $what == all ]]; then
  bed bash -c 'for a in lane ring; do run bin/goring bench allreduce --alg $a --netns $PREFIX --nodes 4 --ppn 4 --bytes 4MiB:64MiB --iters 3 --warmup 1 --validate; done'
fi
if [[ $what == alltoallv || $what == all ]]; then
  bed bash -c 'for a in nimble pairwise; do run bin/goring bench alltoallv --alg $a --hot 0:0.7 --netns $PREFIX --nodes 4 --ppn 4 --bytes 256KiB:1MiB --iters 3 --warmup 1 --validate; done'
fi
