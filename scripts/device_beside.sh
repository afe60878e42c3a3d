#!/usr/bin/env bash
# shellcheck disable=SC2054,SC2012 # commas in values; ls of a few plain names
# device_beside.sh: collectives beside a bf16 GEMM on every GPU, in one
# device call: how much of the GEMM's speed each layer leaves, and how much
# slower each collective gets. Uses the UCC that device_node.sh builds (it
# runs that with BUILD_ONLY=1 first: a warm machine reuses the build).
#
#   scripts/device_bundle.sh node                   # here: .carry
#   OUT=$OUT bash .carry/device_beside.sh [np]      # there; np defaults to 4
#
# Columns: tl/nccl, tl/cuda, tl/goring as UCC picks inside goring
# (GORING_TUNE forces the layer), and tl/goring with the node kernels off
# (UCC_TL_GORING_NODE_MAX=0: copy engines only). Each runs ucc_perftest in
# its own processes while one GEMM process a GPU multiplies 8192^3 bf16
# (scripts/gemm_beside.py gemm); the same collective is also timed with the
# GEMM processes paused. Then PyTorch's own overlap in one process: NCCL, and
# the copy-engine symmetric-memory allgather.
#
# Settings: SIZES (bytes a rank, "67108864 268435456"), COLLS ("allgather
# allreduce"), LAYERS ("nccl cuda goring goring-ce"), TORCH=0 (skip the
# PyTorch rows), SECONDS_EACH (each PyTorch phase, s; 3).
# Back in $OUT: beside.txt (the table), beside-raw.tar.gz.
set -uo pipefail
cd "$(dirname "$0")" || exit 1
C=$PWD
NP=${1:-4}
OUT=${OUT:-/tmp/goring-beside}
mkdir -p "$OUT"
R=/tmp/goring-beside-raw
rm -rf "$R" && mkdir -p "$R"
trap 'touch "$R/ctl/stop" 2>/dev/null; tar czf "$OUT/beside-raw.tar.gz" -C /tmp goring-beside-raw 2>/dev/null' EXIT
export NCCL_NVLS_ENABLE=0 NCCL_IB_DISABLE=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for v in $(env | sed -n 's/^\(UCC_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

BUILD_ONLY=1 OUT=$R/node bash "$C/device_node.sh" "$NP" >"$R/build.txt" 2>&1 ||
  { echo "device_beside: UCC build failed"; tail -20 "$R/build.txt"; exit 1; }
W=/tmp/ucc-build-node
P=$W/install/bin/ucc_perftest
[ -x "$P" ] || { echo "device_beside: no ucc_perftest in $W"; cat "$R/build.txt"; exit 1; }
UCX=$C/.deps/ucx-cu13/libucx
NCCL_LIBDIR=$(dirname "$(readlink -f /tmp/goring-nccl/lib/libnccl.so 2>/dev/null)" 2>/dev/null)
export LD_LIBRARY_PATH=$W/install/lib:$UCX/lib${NCCL_LIBDIR:+:$NCCL_LIBDIR}
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np "$NP" --mca pml ob1 --mca btl self,vader
  -x LD_LIBRARY_PATH -x UCX_MEMTYPE_CACHE=n -x NCCL_NVLS_ENABLE -x NCCL_IB_DISABLE)
GTUNE=allgather,allreduce,reduce_scatter:cuda:inf
cfg() {
  case $1 in
  nccl) echo "-x UCC_TLS=ucp,nccl -x UCC_TL_NCCL_TUNE=inf" ;;
  cuda) echo "-x UCC_TLS=ucp,cuda -x UCC_TL_CUDA_TUNE=inf" ;;
  goring) echo "-x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=$GTUNE" ;;
  goring-ce) echo "-x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=$GTUNE -x UCC_TL_GORING_NODE_MAX=0" ;;
  esac
}
# ucc_perftest's mean µs at its one size.
perf_us() { awk '$1 ~ /^[0-9]+$/ && NF >= 5 {v=$3} END {print v}' "$1"; }

# One GEMM process a GPU, for the whole run; paused between phases.
CTL=$R/ctl
mkdir -p "$CTL"
touch "$CTL/pause"
for ((g = 0; g < NP; g++)); do
  python3 "$C/gemm_beside.py" gemm --gpu "$g" --log "$R/gemm$g.log" --ctl "$CTL" >"$R/gemm$g.err" 2>&1 &
done
for _ in $(seq 120); do
  [ "$(ls "$CTL"/ready* 2>/dev/null | wc -l)" -ge "$NP" ] && break
  sleep 1
done
[ "$(ls "$CTL"/ready* 2>/dev/null | wc -l)" -ge "$NP" ] || { echo "device_beside: GEMM processes did not start"; cat "$R"/gemm*.err; exit 1; }
: >"$R/windows.txt" # name start end: the wall-clock windows the GEMM logs are cut by
window() { # window NAME CMD...: runs CMD with the GEMMs going, records its window
  local name=$1 t0 t1
  shift
  rm -f "$CTL/pause"
  sleep 0.5
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  touch "$CTL/pause"
  echo "$name $t0 $t1" >>"$R/windows.txt"
}
window gemm-alone sleep 4

SIZES=${SIZES:-67108864 268435456}
COLLS=${COLLS:-allgather allreduce}
LAYERS=${LAYERS:-nccl cuda goring goring-ce}
for L in $LAYERS; do
  for c in $COLLS; do
    [ "$L" = cuda ] && [ "$c" = allreduce ] && continue # tl/cuda has allreduce only over NVLS (compiled out)
    for b in $SIZES; do
      n=$((b / 4))
      it=$((b > 100000000 ? 150 : 500))
      f=$R/${L}_${c}_$b
      # shellcheck disable=SC2046
      timeout -k 5 90 "${MPIRUN[@]}" $(cfg "$L") "$P" -c "$c" -m cuda -d float32 -b "$n" -e "$n" -n "$it" -w 10 -F >"$f.alone" 2>&1
      # Beside the GEMM, calls enough for 3 s at the time alone (more while
      # the GEMM slows them): the window holds mpirun's and the layer's
      # start and end too, and the collective must be most of what the
      # GEMM's batches in it ran beside.
      itb=$(awk -v u="$(perf_us "$f.alone")" -v i="$it" 'BEGIN { if (u + 0 > 0) { n = int(3e6 / u) + 1; if (n > i) i = n }; print i }')
      # shellcheck disable=SC2046
      window "$L/$c/$b" timeout -k 5 150 "${MPIRUN[@]}" $(cfg "$L") "$P" -c "$c" -m cuda -d float32 -b "$n" -e "$n" -n "$itb" -w 10 -F >"$f.beside" 2>&1
      echo "device_beside: $L $c $b: alone $(perf_us "$f.alone") us ($it calls), beside $(perf_us "$f.beside") us ($itb calls)"
    done
  done
done
touch "$CTL/stop"
wait

# The table: the GEMM's speed in each window (median over its batches and
# GPUs, the first 2 s of a window dropped: mpirun and UCC start there; and
# the last 1 s: the layer's and mpirun's end).
python3 - "$R" "$NP" >"$OUT/beside.txt" <<'EOF'
import statistics, sys
R, NP = sys.argv[1], int(sys.argv[2])
samples = []
for g in range(NP):
    try:
        for l in open(f"{R}/gemm{g}.log"):
            t, v = l.split()
            samples.append((float(t), float(v)))
    except OSError:
        pass
def perf(path):
    v = None
    try:
        for l in open(path, errors="replace"):
            p = l.split()
            if len(p) >= 5 and p[0].isdigit():
                v = float(p[2])
    except OSError:
        pass
    return v
win = [l.split() for l in open(f"{R}/windows.txt")]
def gemm(name, skip, tail=0.0):
    for n, a, b in win:
        if n == name:
            a, b = float(a) + skip, float(b) - tail
            s = [v for t, v in samples if a <= t <= b]
            return statistics.median(s) if s else None, len(s)
    return None, 0
alone, _ = gemm("gemm-alone", 1.0)
print(f"bf16 8192^3 GEMM on each of {NP} GPUs, its own process: alone {alone or 0:.0f} TFLOP/s (median of batches)")
print("collective: ucc_perftest -m cuda -d float32 in its own processes, µs mean; 'beside' = while the GEMMs run")
h = f"{'layer':<10}{'collective':<11}{'bytes/rank':>11}{'alone us':>11}{'beside us':>11}{'slower':>8}{'GEMM TFLOP/s':>14}{'GEMM kept':>10}{'samples':>8}"
print(h)
print("-" * len(h))
for n, _, _ in win:
    if n == "gemm-alone":
        continue
    L, c, b = n.split("/")
    f = f"{R}/{L}_{c}_{b}"
    a, s = perf(f + ".alone"), perf(f + ".beside")
    g, k = gemm(n, 2.0, 1.0)
    slower = f"{s / a:7.2f}x" if a and s else f"{'-':>8}"
    kept = f"{100 * g / alone:9.0f}%" if g and alone else f"{'-':>10}"
    print(f"{L:<10}{c:<11}{b:>11}{a or 0:>11.1f}{s or 0:>11.1f}{slower}{g or 0:>14.0f}{kept}{k:>8}")
EOF
if [ "${TORCH:-1}" = 1 ]; then
  echo "PyTorch in one process, the collective on its own stream beside the GEMM (bf16):" >>"$OUT/beside.txt"
  for b in $SIZES; do
    for how in "allgather nccl" "allgather symm" "allreduce nccl"; do
      # shellcheck disable=SC2086
      set -- $how # two words: the collective and how
      timeout -k 5 150 python3 "$C/gemm_beside.py" torch --np "$NP" --coll "$1" --how "$2" --bytes "$b" --seconds "${SECONDS_EACH:-3}" \
        >>"$OUT/beside.txt" 2>"$R/torch_${1}_${2}_$b.err" ||
        { echo "torch $2 $1 $b: exit $?: $(grep -v '^\s*$' "$R/torch_${1}_${2}_$b.err" | tail -1)" >>"$OUT/beside.txt"; }
    done
  done
fi
cat "$OUT/beside.txt"
