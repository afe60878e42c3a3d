#!/usr/bin/env bash
# The main job on an embedded default: local processes, no GPU, no UCC.
# 1. goring bench: allgather and allreduce, every algorithm, 4 local processes
#    in 2 emulated nodes of 2 GPUs, contents validated every iteration.
# 2. goring sim: the same collectives predicted on 8 clusterB nodes (32 H100s),
#    where Parallel Rings and the lane allreduce have rails to spread over.
set -euo pipefail
bin=${1:-bin/goring}
export UCX_WARN_UNUSED_ENV_VARS=n

for c in allgather allreduce; do
  echo "== goring bench $c --alg all --np 4 --nodes 2 --bytes 4KiB:1MiB --validate"
  "$bin" bench "$c" --alg all --np 4 --nodes 2 --bytes 4KiB:1MiB --iters 20 --warmup 5 --validate
  echo
done

for c in allgather allreduce; do
  echo "== goring sim $c --alg all --topo clusterB --nodes 8 --bytes 1MiB:256MiB"
  "$bin" sim "$c" --alg all --topo clusterB --nodes 8 --bytes 1MiB:256MiB
  echo
done
