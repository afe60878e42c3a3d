#!/usr/bin/env bash
# device_moe.sh: goring's MoE dispatch and combine on the GPUs of one node
# beside NCCL's all_to_all_single with the same counts (unicast's: one
# token row per token and destination rank), in one device call, and a
# table of NCCL's time over goring's per algorithm.
#
#   here:   scripts/device_bundle.sh          # .carry/bin/goring and the CUDA UCX
#   there:  bash scripts/device_moe.sh        # with carry [".carry"]
#
# Settings (environment): NP (4, or 2) processes, one per GPU; TOKENS
# ("256,1024,2048,8192") tokens per rank; HIDDEN (8192) bytes per token
# row; TOPK (2) of EXPERTS (8); HOT ("0:0.7", empty for none); NODES
# ("1 2"): the ranks as one node, then as two emulated nodes of NP/2
# (multiwrite's relay then crosses NVLink, not a rail: this measures the
# relay's cost, not its saving); ITERS (20). Writes $OUT (the device
# tool's folder, else /tmp/moe-out): goring_*.json, routing_*.json,
# nccl_*.json, table.txt, logs.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/.carry/bin}
OUT=${OUT:-/tmp/moe-out}
NP=${NP:-4}
TOKENS=${TOKENS:-256,1024,2048,8192}
HIDDEN=${HIDDEN:-8192}
TOPK=${TOPK:-2}
EXPERTS=${EXPERTS:-8}
HOT=${HOT-0:0.7}
NODES=${NODES:-1 2}
ITERS=${ITERS:-20}
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT/logs"
fail=0
[ -x "$B/goring" ] || { echo "no $B/goring: run scripts/device_bundle.sh here and carry .carry"; exit 2; }
# The routing files are drawn on a topology of NP ranks: clusterB nodes
# of 4, or the two GPUs of h200x2.
if [ $((NP % 4)) -eq 0 ]; then
  rtopo=(--topo clusterB --nodes $((NP / 4)))
elif [ "$NP" = 2 ]; then
  rtopo=(--topo h200x2)
else
  echo "NP=$NP: the routing file is drawn on clusterB nodes of 4 ranks or on h200x2's 2; use 2 or a multiple of 4"; exit 2
fi
nvidia-smi -L || true
hot=(); [ -n "$HOT" ] && hot=(--hot "$HOT")
route=(--tokens "$TOKENS" --hidden-bytes "$HIDDEN" --topk "$TOPK" --experts "$EXPERTS" "${hot[@]}")
gj=()
for nodes in $NODES; do
  for c in dispatch combine; do
    dt=(); [ $c = combine ] && dt=(--dtype bfloat16)
    tag="${c}_nodes$nodes"
    echo "== goring bench $c, $NP ranks as $nodes node(s): validated once, then timed"
    "$B/goring" bench "$c" --alg all --np "$NP" --gpus "$NP" --mem cuda --nodes "$nodes" "${route[@]}" "${dt[@]}" \
      --iters 2 --warmup 1 --validate --json >"$OUT/logs/valid_$tag.json" 2>"$OUT/logs/valid_$tag.err" ||
      { echo "FAIL validation of $tag"; tail -5 "$OUT/logs/valid_$tag.err"; fail=1; continue; }
    "$B/goring" bench "$c" --alg all --np "$NP" --gpus "$NP" --mem cuda --nodes "$nodes" "${route[@]}" "${dt[@]}" \
      --iters "$ITERS" --warmup 5 --json 2>"$OUT/logs/goring_$tag.err" |
      python3 -c "import json,sys; d=json.load(sys.stdin); [r.update(algorithm=r['algorithm']+'/n$nodes') for r in d['results']]; json.dump(d, sys.stdout)" \
      >"$OUT/goring_$tag.json" && gj+=("$OUT/goring_$tag.json") || { echo "FAIL goring bench $tag"; tail -5 "$OUT/logs/goring_$tag.err"; fail=1; }
  done
done
nj=()
for t in ${TOKENS//,/ }; do
  # The routing goring's bench drew for this count (same flags, same
  # seed): the routing depends on the ranks, not on the topology named.
  "$B/goring" plan dispatch --alg unicast "${rtopo[@]}" --tokens "$t" --hidden-bytes "$HIDDEN" \
    --topk "$TOPK" --experts "$EXPERTS" "${hot[@]}" --routing-out "$OUT/routing_$t.json" >/dev/null 2>"$OUT/logs/routing_$t.err" ||
    { echo "FAIL routing $t"; tail -3 "$OUT/logs/routing_$t.err"; fail=1; continue; }
  echo "== NCCL all_to_all_single, $t tokens per rank"
  python3 "$ROOT/scripts/moe_nccl.py" run --routing "$OUT/routing_$t.json" --iters "$ITERS" --json \
    >"$OUT/nccl_$t.json" 2>"$OUT/logs/nccl_$t.err" && nj+=("$OUT/nccl_$t.json") ||
    { echo "FAIL nccl $t"; tail -5 "$OUT/logs/nccl_$t.err"; fail=1; }
done
if [ ${#gj[@]} -gt 0 ] && [ ${#nj[@]} -gt 0 ]; then
  python3 "$ROOT/scripts/moe_nccl.py" table --goring "${gj[@]}" --nccl "${nj[@]}" | tee "$OUT/table.txt"
fi
exit $fail
