#!/usr/bin/env bash
# device_netns.sh: goring's multi-node algorithms on GPU buffers over real,
# rate-limited rails, on one GPU machine cut into nodes by network
# namespaces (docs/netns.md "GPU buffers"). Run from the repository root on
# the GPU machine, as root, with .carry/netns.tar.xz from
# `scripts/device_bundle.sh netns` (goring, its CUDA-enabled UCX, iproute2
# for an image without ip/tc); the machine's python3 with PyTorch runs the
# NCCL baseline. Nothing else is needed.
#
#   bash scripts/device_netns.sh [all|validate|time|mpi|moe|"mpi time"...]   # OUT=dir keeps the logs
#
# 1. the testbed: NODES nodes (2) of PPN ranks (GPUs / NODES; in mode moe
#    alone at least 1), RAILS rails (max(PPN, 2), in mode moe at least the
#    largest of MOE_PPN) at RATE (1gbit: far below what a veth and the
#    staging copies carry, so the rails set the pace), torn down on any
#    exit;
# 2. (validate) one host-memory run (the testbed and launcher alone), then
#    every collective with every algorithm, odd sizes,
#    --validate, on 2 x 1 and 2 x 2 ranks (2 x 2 on fewer than 4 GPUs shares
#    each GPU between the nodes: the push engine inside a node, the staged
#    rails between them), --ipc=false once (UCX's cuda_ipc inside a node);
# 3. (time) allgather and allreduce with every algorithm, alltoallv nimble
#    with --hot 0:0.7 (COLLS: a subset), SIZES (1MiB:64MiB), and NCCL over sockets on the same
#    rails (torch.distributed, scripts/nccl_bench.py --rank, one rank per
#    GPU in its node's namespace, NCCL_HOSTID per node; its alltoallv is
#    all_to_all_single with the same --hot 0:0.7 counts), then one table
#    with goring/NCCL (scripts/netns_table.py) and the bytes each rail
#    carried;
# 4. (mpi, with .carry/cluster.tar.xz from `scripts/device_bundle.sh
#    cluster`) the users' stacks across the nodes: ucc_test_mpi -M cuda
#    through goring, and OMB -d cuda through Open MPI + UCX, coll/ucc with
#    tl/ucp and with tl/goring (scripts/device_netns_mpi.sh);
# 5. (moe) MoE dispatch and combine: every algorithm validated, each timed
#    beside NCCL's all_to_all_single with the same routing, and the bytes
#    each put on the rails beside goring's plan
#    (scripts/device_netns_moe.sh). MOE_PPN=4 on one GPU (NIMBLE's 2 x 4:
#    8 ranks, 4 rails) gives each NCCL rank its own NCCL_HOSTID
#    (MOE_NCCL_HOSTID there):
#      MOE_PPN=4 MOE_ROUTINGS=hot bash scripts/device_netns.sh moe
# MODE is one of these words or several; all is validate and time.
# The last line says whether everything passed; the exit status too.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
C=$ROOT/.carry
MODE=${1:-all}
OUT=${OUT:-/tmp/goring-netns}
LOGS=$OUT/logs
mkdir -p "$LOGS"
: >"$OUT/summary.txt"
fail=0
step() { echo; echo "== $*"; }
die() { echo "device_netns: $*" | tee -a "$OUT/summary.txt" >&2; exit 2; }
run() { # run NAME CMD...: log to $LOGS/NAME.log, one line of verdict
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$LOGS/$name.log" 2>&1; then
    echo "ok   $name ($((SECONDS - t0)) s)" | tee -a "$OUT/summary.txt"
  else
    echo "FAIL $name ($((SECONDS - t0)) s)" | tee -a "$OUT/summary.txt"
    tail -12 "$LOGS/$name.log" | tee -a "$OUT/summary.txt"; fail=1
  fi
}

[ "$(id -u)" = 0 ] || die "must run as root (network namespaces)"
if [ -f "$C/cluster.tar.xz" ]; then
  # .carry and .carry-osu in one archive (device_bundle.sh cluster).
  tar xJf "$C/cluster.tar.xz" -C "$ROOT" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$C/cluster.tar.xz" "$ROOT" ||
    die "cannot unpack $C/cluster.tar.xz"
elif [ -f "$C/netns.tar.xz" ]; then
  # Python's lzma where the image has no xz.
  tar xJf "$C/netns.tar.xz" -C "$C" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$C/netns.tar.xz" "$C" ||
    die "cannot unpack $C/netns.tar.xz"
fi
B=$C/bin
[ -x "$B/goring" ] || die "no $B/goring: run scripts/device_bundle.sh netns here first and carry .carry"
export GORING_LIBUCP=$C/.deps/ucx-cu13/libucx/lib/libucp.so.0
[ -f "$GORING_LIBUCP" ] || die "no carried UCX at $GORING_LIBUCP"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# ip and tc: the image's, else the carried ones behind wrappers that give
# the carried libraries to ip and tc alone. `ip netns exec NS CMD` hands
# CMD the caller's LD_LIBRARY_PATH back, so that the ranks (goring, Python)
# never load Debian's libraries in place of the image's.
W=$(mktemp -d)
if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  I=$C/iproute2
  [ -x "$I/bin/ip" ] || die "no ip/tc in the image and none carried ($I/bin/ip)"
  cat >"$W/ip" <<EOF
#!/bin/bash
orig=\${LD_LIBRARY_PATH-}
if [ "\${1-} \${2-}" = "netns exec" ] && [ \$# -ge 4 ]; then
  ns=\$3; shift 3
  LD_LIBRARY_PATH=$I/lib exec $I/bin/ip netns exec "\$ns" env LD_LIBRARY_PATH="\$orig" "\$@"
fi
LD_LIBRARY_PATH=$I/lib exec $I/bin/ip "\$@"
EOF
  printf '#!/bin/bash\nLD_LIBRARY_PATH=%s/lib exec %s/bin/tc "$@"\n' "$I" "$I" >"$W/tc"
  chmod +x "$W/ip" "$W/tc"
fi
if ! command -v sysctl >/dev/null; then
  # testbed.sh turns IPv6 off with sysctl -w KEY=VALUE; without procps,
  # the same write to /proc/sys (of the caller's network namespace).
  cat >"$W/sysctl" <<'EOF'
#!/bin/bash
for a in "$@"; do
  case $a in -*) ;; *=*) k=${a%%=*}; echo "${a#*=}" >"/proc/sys/${k//.//}" || exit 1 ;; esac
done
EOF
  chmod +x "$W/sysctl"
fi
export PATH=$W:$PATH

GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}
NODES=${NODES:-2}
# Mode moe alone takes its shapes from MOE_PPN, which may share GPUs (one
# GPU: PPN 1 here, all ranks on it there).
ppn0=$((GPUS / NODES))
[ "$MODE" = moe ] && [ "$ppn0" -lt 1 ] && ppn0=1
PPN=${PPN:-$ppn0}
[ "$PPN" -ge 1 ] || die "$GPUS GPU(s) for $NODES nodes: want at least one GPU per node (NODES=, PPN=)"
# Rails: max(PPN, 2), and in mode moe at least the largest of MOE_PPN (a
# shape of PPN ranks a node uses PPN rails).
rails0=$((PPN > 2 ? PPN : 2))
if [[ " $MODE " == *" moe "* ]]; then
  for p in ${MOE_PPN:-1 2}; do [ "$p" -gt "$rails0" ] && rails0=$p; done
fi
RAILS=${RAILS:-$rails0}
RATE=${RATE:-1gbit}
SIZES=${SIZES:-1MiB:64MiB}
# COLLS: the collectives timed, goring and NCCL alike (a subset of the three).
COLLS=${COLLS:-allgather,allreduce,alltoallv}
ITERS=${ITERS:-5}
export PREFIX=${PREFIX:-gd} NODES RAILS RATE
TB=$ROOT/tests/netns/testbed.sh
# Always down: also after a failure or a signal (the ranks a killed run
# left in the namespaces go with them, testbed.sh down).
# shellcheck disable=SC2317 # called by the trap
cleanup() { tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null; "$TB" down >/dev/null 2>&1 || echo "device_netns: testbed $PREFIX not removed: $TB down" >&2; rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "GPUs $GPUS; testbed $NODES nodes x $PPN ranks, $RAILS rails at $RATE; ip: $(command -v ip)"

step "testbed"
"$TB" up 2>&1 | tail -3 || true
"$TB" ping || die "the testbed did not come up (network namespaces, veth, bridge and tbf must be allowed here); see above"

want() { [[ " $MODE " == *" $1 "* ]] || { [ "$1" != mpi ] && [ "$1" != moe ] && [[ " $MODE " == *" all "* ]]; }; }
gbench() { "$B/goring" bench "$@" --netns "$PREFIX" --mem cuda --gpus "$GPUS"; }

if want validate; then
  step "host memory first (the testbed and the launcher alone)"
  run validate_host_allgather "$B/goring" bench allgather --netns "$PREFIX" --nodes "$NODES" --ppn 1 --rails 1 \
    --alg parallel_rings --bytes 7,1MiB --iters 2 --warmup 1 --validate --json
  step "every collective, every algorithm, validated (GPU buffers, staged rails)"
  for ppn in ${VAL_PPN:-1 2}; do
    [ "$ppn" -le "$RAILS" ] || continue
    for c in allgather allreduce reduce_scatter bcast alltoallv; do
      sizes="1,7,4099,70001,1MiB"
      extra=()
      case $c in
        allreduce) extra=(--dtype float32 --op sum); sizes="4,28,16396,280004,1MiB" ;;
        reduce_scatter) extra=(--dtype int32 --op max); sizes="4,28,16396,280004,1MiB" ;;
        bcast) extra=(--root $((NODES * ppn - 1))) ;;
      esac
      run "validate_${c}_${NODES}x$ppn" gbench "$c" --nodes "$NODES" --ppn "$ppn" --rails "$ppn" --alg all --bytes "$sizes" \
        --iters 2 --warmup 1 --validate --json "${extra[@]}"
    done
    run "validate_alltoallv_hot_${NODES}x$ppn" gbench alltoallv --nodes "$NODES" --ppn "$ppn" --rails "$ppn" --hot 0:0.7 \
      --bytes 7,70001,1MiB --iters 2 --warmup 1 --validate --json
  done
  # Inside a node through UCX's cuda_ipc instead of the push engine.
  if [ "$RAILS" -ge 2 ]; then
    run "validate_allreduce_${NODES}x2_noipc" gbench allreduce --nodes "$NODES" --ppn 2 --rails 2 --ipc=false \
      --dtype bfloat16 --op sum --bytes 8,16392,1MiB --iters 2 --warmup 1 --validate --json
  fi
  # What cannot work is refused, with a reason.
  if gbench allreduce --nodes "$NODES" --ppn 1 --rails 1 --lanes 2 --bytes 1MiB >"$LOGS/refuse_lanes.log" 2>&1; then
    echo "FAIL refuse_lanes: --lanes 2 with --mem cuda ran" | tee -a "$OUT/summary.txt"; fail=1
  else
    echo "ok   refuse_lanes: $(tail -1 "$LOGS/refuse_lanes.log")" | tee -a "$OUT/summary.txt"
  fi
fi

railbytes() { "$TB" sent | tr '\n' ' '; echo; } # bytes sent on every node's rails so far, one line

# shellcheck source=/dev/null # scripts/device_netns_mpi.sh, checked on its own
want mpi && source "$ROOT/scripts/device_netns_mpi.sh"
want mpi && { mpi_start; mpi_check; mpi_perf; }

if want time; then
  NP=$((NODES * PPN))
  step "speed: $NODES nodes x $PPN GPUs, $PPN rail(s) at $RATE, $SIZES, us per call"
  echo "rail bytes before: $(railbytes)"
  gj=()
  for spec in "allgather:all" "allreduce:all" "alltoallv:nimble"; do
    c=${spec%%:*} a=${spec##*:}
    [[ ",$COLLS," == *",$c,"* ]] || continue
    extra=()
    [ "$c" = allreduce ] && extra=(--dtype float32 --op sum)
    [ "$c" = alltoallv ] && extra=(--hot 0:0.7)
    if gbench "$c" --nodes "$NODES" --ppn "$PPN" --rails "$PPN" --alg "$a" --bytes "$SIZES" --iters "$ITERS" --warmup 1 \
      --json "${extra[@]}" >"$OUT/goring_$c.json" 2>"$LOGS/goring_$c.err"; then
      gj+=("$OUT/goring_$c.json")
      echo "ok   time_$c" | tee -a "$OUT/summary.txt"
    else
      echo "FAIL time_$c" | tee -a "$OUT/summary.txt"; tail -8 "$LOGS/goring_$c.err" | tee -a "$OUT/summary.txt"; fail=1
    fi
  done
  echo "rail bytes after goring: $(railbytes)"
  echo "(allreduce --lanes W > 1 runs host memory only; the lane algorithm's row is one lane)"

  step "NCCL over sockets on the same rails ($NP ranks, one per GPU, NCCL_HOSTID per node)"
  ifs=$(seq -s, -f 'rail%g' 0 $((PPN - 1)))
  if [ "$NP" -lt 2 ] || [ "$NP" -gt "$GPUS" ]; then
    echo "skipped: NCCL needs one GPU per rank ($NP ranks, $GPUS GPUs)"
  else
    pids=()
    hot=(); [[ ",$COLLS," == *",alltoallv,"* ]] && hot=(--hot 0:0.7) # goring's alltoallv counts
    for ((r = NP - 1; r >= 0; r--)); do
      k=$((r / PPN))
      o=/dev/null; [ $r = 0 ] && o=$OUT/nccl.json
      ip netns exec "$PREFIX-node$k" env NCCL_HOSTID="goring-netns-node$k" NCCL_SOCKET_IFNAME="$ifs" NCCL_IB_DISABLE=1 \
        NCCL_NVLS_ENABLE=0 NCCL_DEBUG="${NCCL_DEBUG:-WARN}" \
        timeout 300 python3 "$ROOT/scripts/nccl_bench.py" --np "$NP" --rank "$r" --addr 198.18.0.1 --port 29533 \
        --colls "$COLLS" "${hot[@]}" --bytes "$SIZES" --iters "$ITERS" --warmup 1 --json >"$o" 2>"$LOGS/nccl_rank$r.err" &
      pids+=($!)
    done
    nfail=0
    for p in "${pids[@]}"; do wait "$p" || nfail=1; done
    if [ $nfail = 0 ] && [ -s "$OUT/nccl.json" ]; then
      echo "ok   nccl" | tee -a "$OUT/summary.txt"
    else
      echo "FAIL nccl (baseline only)" | tee -a "$OUT/summary.txt"; tail -8 "$LOGS/nccl_rank0.err" | tee -a "$OUT/summary.txt"
      rm -f "$OUT/nccl.json"
    fi
    echo "rail bytes after NCCL: $(railbytes)"
  fi

  step "goring beside NCCL"
  n=(); [ -s "$OUT/nccl.json" ] && n=(--nccl "$OUT/nccl.json")
  [ ${#gj[@]} -gt 0 ] && python3 "$ROOT/scripts/netns_table.py" --goring "${gj[@]}" "${n[@]}" | tee "$OUT/table.txt"
fi

want mpi && mpi_omb

# shellcheck source=/dev/null # scripts/device_netns_moe.sh, checked on its own
want moe && { source "$ROOT/scripts/device_netns_moe.sh"; moe_run; }
echo
[ $fail = 0 ] && echo "device_netns: all passed" || echo "device_netns: FAILURES above (logs in $OUT/logs.tgz)"
exit $fail
