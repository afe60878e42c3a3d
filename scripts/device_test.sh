#!/usr/bin/env bash
# device_test.sh: goring's GPU checks on a machine with the NVIDIA driver,
# from what scripts/device_bundle.sh put in .carry/ (nothing else needed:
# no Go, no toolkit, no network). Run from the repository root there:
#
#   bash .carry/device_test.sh [quick|correct|p2p|full|collcal|peers|chunks|shared]   # OUT=dir keeps the logs
#   GPUTESTS=0 skips step 1 (a second mode in the same device call)
#
# 1. the GPU tests: package cuda (driver binding, reduction kernels
#    bit-identical to the host's), package cudaexec (every algorithm of
#    every collective run whole on one GPU, equal to host memory), and the
#    reduction's rate against a copy of the same size;
# 2. goring bench --mem cuda between processes (goring's CUDA IPC push): every
#    algorithm of every collective, validated, 2, 3, 4 and 8 processes on
#    the GPUs the machine has (several per GPU);
# 3. (correct, full) 16 MiB and 256 MiB per rank, validated, 4 processes;
# 4. (full) the speed table: allgather and allreduce, 4 processes,
#    4-256 MiB per rank, push engine and UCX cuda_ipc in the same run.
# peers (alone): one process per GPU (two or more GPUs): every collective
#    validated across the GPUs, then goring (every algorithm, and --alg auto:
#    what the team layer runs) beside NCCL (torch.distributed,
#    scripts/nccl_bench.py), PyTorch's two-shot allreduce (nccl_bench.py
#    --how two_shot), both also per call (--clock host, goring's own
#    clock), and UCC's tl/ucp and tl/goring (device_ucc.sh,
#    built in the background meanwhile), one table (scripts/peer_table.py).
# chunks (alone): the pipelining sweep behind the chunk defaults: the
#    reducing collectives and ring allgather with --chunks 1-16, one process
#    per GPU, 16/64/256 MiB (docs/gpu.md "Two GPUs").
# shared (alone): the leader algorithms on one GPU shared by 2-8 processes
#    (package direct's device backend), validated over dtypes and ops, then their speed
#    beside goring's earlier defaults (docs/gpu.md "One process drives a
#    shared GPU").
# collcal (alone): collectives with the engine's multi-path split
#    (--calibration), 2 processes, against the same collectives without it
#    in the same run; see docs/gpu.md "Collectives over several paths".
set -uo pipefail
cd "$(dirname "$0")"
B=$PWD/bin
ROOT=$(cd .. && pwd) # the repository (test binaries run in their package folder)
MODE=${1:-full}
OUT=${OUT:-/tmp/goring-device}
LOGS=$(mktemp -d) # one log per step; packed into $OUT/logs.tgz at the end
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export GORING_LIBUCP=$PWD/.deps/ucx-cu13/libucx/lib/libucp.so.0
fail=0
step() { echo; echo "== $*"; }
# peers and chunks run one process per GPU; on one GPU, the 4 processes
# of the one-GPU targets (NCCL, which needs a GPU per process, is skipped).
peers_np() { if [ "$GPUS" -ge 2 ]; then echo "$GPUS"; else echo 4; fi; }
run() { # run NAME CMD...: log to $OUT/NAME.log, print its tail
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$LOGS/$name.log" 2>&1; then
    echo "ok   $name ($((SECONDS - t0)) s)" | tee -a "$OUT/summary.txt"
  else
    echo "FAIL $name ($((SECONDS - t0)) s)" | tee -a "$OUT/summary.txt"
    grep -v "^r[a-z0-9]* *0x\|^[a-z]s *0x" "$LOGS/$name.log" | tail -15 | tee -a "$OUT/summary.txt"; fail=1
  fi
}
step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
GPUS=${GPUS:-$(nvidia-smi -L | wc -l)} # GPUS=1 with CUDA_VISIBLE_DEVICES=0: one GPU of several
# The carried ucx_info with its own libraries (without them it loads the
# image's UCX 1.16 libucs and crashes at exit).
ucxinfo() { LD_LIBRARY_PATH="$PWD/.deps/ucx-cu13/libucx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$PWD/.deps/ucx-cu13/libucx/bin/ucx_info" "$@"; }
ucxinfo -v | head -2
ucxinfo -d | grep -E "Transport: (cuda|cma|posix|sysv)" | sort -u | tr '\n' ' '; echo

if [ "$MODE" = peers ]; then
  # UCC for the baselines builds while the correctness runs go (they are
  # not timed); the timed part starts once it is done.
  BUILD_ONLY=1 OUT="$OUT/ucc" nice -n 10 bash ./device_ucc.sh >"$LOGS/ucc_build.log" 2>&1 &
  ucc_build=$!
fi
[ "${GPUTESTS:-1}" = 1 ] && {
step "GPU tests"
run cuda.test bash -c "cd '$ROOT/cuda' && '$B/cuda.test' -test.v -test.count=1"
grep -E "^(--- |ok|FAIL|PASS)|loaded from|bit-identical" "$LOGS/cuda.test.log" | head -40
if [ "$MODE" != peers ]; then # peers: whole plans on one GPU were checked by the other modes
  run cudaexec.test bash -c "cd '$ROOT/cudaexec' && '$B/cudaexec.test' -test.v -test.count=1"
  grep -E "^(--- |ok|FAIL|PASS)|plans on the GPU" "$LOGS/cudaexec.test.log"
fi
# The team layer on CUDA buffers (when tl.test was carried: it is left out
# where the 64 MiB a call carries runs short): teams of this process, and
# processes sharing GPU 0, with cuMemAlloc'd and stream-ordered pool memory.
if [ -x "$B/tl.test" ] && [ "$GPUS" = 1 ]; then
  run tl.test bash -c "cd '$ROOT/team' && '$B/tl.test' -test.run 'OnGPU|SharedGPU' -test.v -test.count=1"
  grep -E "^(--- |ok|FAIL|PASS)|on one device" "$LOGS/tl.test.log"
fi
(cd "$ROOT/cuda" && GORING_CUDA_BENCH=1 "$B/cuda.test" -test.run 'ReduceBandwidth' -test.v 2>&1) | grep "^cuda:" | tee "$OUT/reduce_bw.txt"
}

if [ "$MODE" = shared ]; then
  # The leader algorithms where every process shares GPU 0 (package
  # direct's device backend: rank 0 does every rank's device work), validated for 2, 3, 4
  # and 8 processes, dtypes and ops, one element to 256 MiB (reduce_scatter
  # to 16 MiB per rank), bcast from the first and the last rank; then their
  # speed beside goring's earlier defaults (recursive doubling, multiwrite),
  # 4 processes, in the same call.
  step "leader on one shared GPU: validated, 2/3/4/8 processes"
  for np in ${SHARED_NP:-2 3 4 8}; do
    run "shared_allgather_np$np" "$B/goring" bench allgather --np "$np" --mem cuda --gpus 1 --alg leader \
      --bytes 1,7,4099,70001,16777217,268435456 --iters 2 --warmup 1 --validate --json
    for dto in ${SHARED_DTOS:-float32:sum bfloat16:sum float16:min int32:max float64:prod int8:bxor uint64:sum}; do
      run "shared_allreduce_np${np}_${dto/:/_}" "$B/goring" bench allreduce --np "$np" --mem cuda --gpus 1 --alg leader \
        --dtype "${dto%%:*}" --op "${dto##*:}" --bytes 8,24,16392,280008,16777224,268435456 --iters 2 --warmup 1 --validate --json
    done
    for dto in float32:sum bfloat16:max int32:prod; do
      run "shared_reduce_scatter_np${np}_${dto/:/_}" "$B/goring" bench reduce_scatter --np "$np" --mem cuda --gpus 1 --alg leader \
        --dtype "${dto%%:*}" --op "${dto##*:}" --bytes 8,24,16392,280008,16777224 --iters 2 --warmup 1 --validate --json
    done
    for root in 0 $((np - 1)); do
      run "shared_bcast_np${np}_root$root" "$B/goring" bench bcast --np "$np" --mem cuda --gpus 1 --alg leader --root "$root" \
        --bytes 1,7,4099,70001,16777217,268435456 --iters 2 --warmup 1 --validate --json
    done
  done
  step "speed: leader beside goring's earlier defaults, 4 processes on one GPU, us per call"
  printf '%-30s %s\n' algorithm "${SHARED_SIZES:-4MiB,16MiB,64MiB,256MiB}" | tee "$OUT/shared.txt"
  for ca in allgather:leader allgather:multiwrite allreduce:leader allreduce:recursive_doubling; do
    c=${ca%%:*} a=${ca##*:}
    extra=(); [ $c = allreduce ] && extra=(--dtype float32 --op sum)
    t=$("$B/goring" bench "$c" --np 4 --mem cuda --gpus 1 --alg "$a" --bytes "${SHARED_SIZES:-4MiB,16MiB,64MiB,256MiB}" \
      --iters 20 --warmup 5 --json "${extra[@]}" 2>>"$LOGS/shared.err" |
      python3 -c "import json,sys; print(' '.join('%12.1f' % r['avg_us'] for r in json.load(sys.stdin)['results']))") || t="failed"
    printf '%-30s %s\n' "$c $a" "$t" | tee -a "$OUT/shared.txt"
  done
  tar czf "$OUT/logs.tgz" -C "$LOGS" .
  exit $fail
fi

if [ "$MODE" = chunks ]; then
  NP=${NP:-$(peers_np)}
  step "pipelining: --chunks 1-16, $NP processes on $GPUS GPUs, 16/64/256 MiB, us per call"
  printf '%-28s %8s %s\n' algorithm chunks/poll "${CHUNK_SIZES:-16MiB,64MiB,256MiB}" | tee "$OUT/chunks.txt"
  for ca in ${CHUNK_ALGS:-allreduce:ring allreduce:rabenseifner allreduce:recursive_doubling allreduce:lane reduce_scatter:ring allgather:ring allgather:neighbor}; do
    c=${ca%%:*} a=${ca##*:}
    extra=(); [ $c != allgather ] && extra=(--dtype float32 --op sum)
    for k in ${CHUNKS:-1 2 4 8 16}; do
      for poll in ${POLLS:-2us}; do
        t=$("$B/goring" bench "$c" --np "$NP" --mem cuda --gpus "$GPUS" --alg "$a" --chunks "$k" --bytes "${CHUNK_SIZES:-16MiB,64MiB,256MiB}" \
          --iters 20 --warmup 5 --json --device-poll "$poll" "${extra[@]}" 2>>"$LOGS/chunks.err" |
          python3 -c "import json,sys; print(' '.join('%12.1f' % r['avg_us'] for r in json.load(sys.stdin)['results']))") || t="failed"
        printf '%-28s %8s %s\n' "$c $a" "$k/$poll" "$t" | tee -a "$OUT/chunks.txt"
      done
    done
    # Four processes on one H100: the simulator's prediction beside it
    # (preset h100-shared4, docs/gpu.md "One GPU in the simulator").
    if [ "$GPUS" = 1 ] && [ "$NP" = 4 ] && nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100; then
      t=$("$B/goring" sim "$c" --alg "$a" --topo h100-shared4 --bytes "${CHUNK_SIZES:-16MiB,64MiB,256MiB}" --json --no-progress 2>>"$LOGS/chunks.err" |
        python3 -c "import json,sys; print(' '.join('%12.1f' % r['predicted_us'] for r in json.load(sys.stdin)['results']))") || t="failed"
      printf '%-28s %8s %s\n' "$c $a" "sim" "$t" | tee -a "$OUT/chunks.txt"
    fi
  done
  tar czf "$OUT/logs.tgz" -C "$LOGS" .
  exit $fail
fi

if [ "$MODE" = peers ]; then
  NP=${NP:-$(peers_np)}
  step "every collective validated, ${PEERS_NP:-$NP and $((2 * NP))} processes on $GPUS GPUs"
  for np in ${PEERS_NP:-$NP $((2 * NP))}; do
    for c in ${PEERS_COLLS:-allgather allreduce reduce_scatter bcast alltoallv}; do
      extra=(); sizes="1,7,4099,70001,1MiB,16777220"
      case $c in allreduce|reduce_scatter) extra=(--dtype float32 --op sum); sizes="4,28,16396,280004,1MiB,16777220" ;; esac
      run "peers_${c}_np$np" "$B/goring" bench "$c" --np "$np" --mem cuda --gpus "$GPUS" --bytes "$sizes" \
        --iters 2 --warmup 1 --validate --json "${extra[@]}"
    done
  done
  for c in allreduce reduce_scatter; do # two pieces: the team layer's default for a pair from 64 MiB
    run "peers_${c}_2pc" "$B/goring" bench "$c" --np "$NP" --mem cuda --gpus "$GPUS" --chunks 2 \
      --bytes 4,28,16396,67108868,268435460 --iters 2 --warmup 1 --validate --json --dtype float32 --op sum
  done
  run peers_allreduce_bf16 "$B/goring" bench allreduce --np "$NP" --mem cuda --gpus "$GPUS" --bytes 8,1MiB,268435456 \
    --iters 2 --warmup 1 --validate --json --dtype bfloat16 --op sum
  step "waiting for UCC's build"
  wait "$ucc_build"; tail -3 "$LOGS/ucc_build.log"
  step "speed: goring beside NCCL and UCC, $NP processes, one per GPU"
  SIZES=${SIZES:-4MiB:256MiB}
  gj=()
  for c in allgather allreduce reduce_scatter; do
    extra=(); [ $c != allgather ] && extra=(--dtype float32 --op sum)
    "$B/goring" bench "$c" --np "$NP" --mem cuda --gpus "$GPUS" --bytes "$SIZES" --iters 20 --warmup 5 --json "${extra[@]}" \
      >"$OUT/goring_$c.json" 2>"$LOGS/goring_$c.err" || { echo "FAIL goring bench $c"; tail -5 "$LOGS/goring_$c.err"; fail=1; }
    gj+=("$OUT/goring_$c.json")
    [ $c = allgather ] && continue
    # The reducing collectives also in two pieces (the team layer's default
    # for a pair from 64 MiB), named alg+2pc in the table.
    "$B/goring" bench "$c" --np "$NP" --mem cuda --gpus "$GPUS" --bytes "$SIZES" --iters 20 --warmup 5 --json --chunks 2 "${extra[@]}" \
      2>>"$LOGS/goring_$c.err" | python3 -c "import json,sys; d=json.load(sys.stdin); [r.update(algorithm=r['algorithm']+'+2pc') for r in d['results']]; json.dump(d, sys.stdout)" \
      >"$OUT/goring_${c}_2pc.json" && gj+=("$OUT/goring_${c}_2pc.json")
  done
  # What the team layer itself runs (--alg auto: the node kernels where the
  # GPUs allow them), each row naming its choice.
  for c in allgather allreduce reduce_scatter; do
    extra=(); [ $c != allgather ] && extra=(--dtype float32 --op sum)
    "$B/goring" bench "$c" --alg auto --np "$NP" --mem cuda --gpus "$GPUS" --bytes "$SIZES" --iters 20 --warmup 5 --json "${extra[@]}" \
      >"$OUT/goring_${c}_auto.json" 2>>"$LOGS/goring_$c.err" && gj+=("$OUT/goring_${c}_auto.json") ||
      { echo "FAIL goring bench $c --alg auto"; tail -5 "$LOGS/goring_$c.err"; fail=1; }
  done
  n=()
  if [ "$GPUS" -ge 2 ]; then
    python3 "$ROOT/scripts/nccl_bench.py" --np "$NP" --bytes "$SIZES" --json >"$OUT/nccl.json" 2>"$LOGS/nccl.err" &&
      n+=(--nccl "$OUT/nccl.json") || { echo "nccl_bench failed:"; tail -5 "$LOGS/nccl.err"; }
    # PyTorch's symmetric-memory two-shot allreduce, the load/store peer.
    python3 "$ROOT/scripts/nccl_bench.py" --how two_shot --colls allreduce --np "$NP" --bytes "$SIZES" --json \
      >"$OUT/two_shot.json" 2>"$LOGS/two_shot.err" && n+=(--nccl "$OUT/two_shot.json") ||
      { echo "nccl_bench --how two_shot failed:"; tail -5 "$LOGS/two_shot.err"; }
    # Both peers again on goring's clock (each call awaited): below a few
    # MiB the back-to-back clock hides a call's host cost that goring's
    # rows include; the table shows both.
    for how in nccl two_shot; do
      cl=(); [ $how = two_shot ] && cl=(--colls allreduce)
      python3 "$ROOT/scripts/nccl_bench.py" --how $how "${cl[@]}" --clock host --np "$NP" --bytes "$SIZES" --json \
        >"$OUT/${how}_host.json" 2>"$LOGS/${how}_host.err" && n+=(--nccl "$OUT/${how}_host.json") ||
        { echo "nccl_bench --how $how --clock host failed:"; tail -5 "$LOGS/${how}_host.err"; }
    done
  else
    echo "NCCL and PyTorch's two-shot allreduce need a GPU per process: left out on one GPU"
  fi
  OUT="$OUT/ucc" CHECK=${CHECK:-0} BASELINE_COLLS="allgather allreduce reduce_scatter" GORING_COLLS="allgather allreduce reduce_scatter" \
    bash ./device_ucc.sh "$NP" 2>&1 | tail -60
  u=()
  for c in allgather allreduce reduce_scatter; do
    [ -s "$OUT/ucc/ucc_perftest_$c.txt" ] && u+=(--ucc "tl/ucp:$c=$OUT/ucc/ucc_perftest_$c.txt")
    [ -s "$OUT/ucc/ucc_perftest_goring_$c.txt" ] && u+=(--ucc "tl/goring:$c=$OUT/ucc/ucc_perftest_goring_$c.txt")
  done
  python3 "$ROOT/scripts/peer_table.py" --np "$NP" --goring "${gj[@]}" "${n[@]}" "${u[@]}" | tee "$OUT/peers.txt"
  for c in allgather allreduce reduce_scatter; do # every algorithm's row, for the record
    python3 -c "import json,sys; [print(r['collective'], r['algorithm'], r['bytes'], round(r['avg_us'],1), round(r['busbw_GBps'],1)) for r in json.load(open(sys.argv[1]))['results']]" "$OUT/goring_$c.json"
  done >"$OUT/goring_rows.txt"
  tar czf "$OUT/logs.tgz" -C "$LOGS" .
  exit $fail
fi

if [ "$MODE" = collcal ]; then
  # Allgather and allreduce, the push engine with and without
  # --calibration (mpath.Planner: the split for each step's load).
  # Two or more GPUs: one process per GPU and a calibration measured here
  # (goring calibrate). One GPU: both processes on it, and two files:
  # cal.json, the one-H100 figures of bench p2p (one H100, 2026-11-25,
  # docs/gpu.md "One transfer over several paths") with
  # the fitted contention (the planner keeps every transfer direct: the
  # run must match the one without); forced.json, the same without
  # contention and with a host path of 400 GB/s, which is not this
  # machine: the planner then splits loaded steps too (15% of a 256 MiB
  # ring round), so the engine's split runs inside collectives on a GPU,
  # validated, and the table shows what a wrong split costs.
  step "collectives with the multi-path split (--calibration)"
  cals=()
  if [ "$GPUS" -ge 2 ]; then
    # The paths as the push engine moves them between two processes (bench
    # p2p's fits), not goring calibrate's one-process figures: with those
    # the planner split ring steps that then ran 1.2x slower (docs/gpu.md
    # "Collectives with a calibration").
    run calibrate "$B/goring" bench p2p --mem cuda --gpus "$GPUS" --bytes 64MiB --calibration-out "$OUT/cal.json"
    cals=(cal)
    G=$GPUS NP=$GPUS # the file records the machine's GPU count: one process per GPU
    case $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) in
      *H100*) simtopo=h100x2 ;; *H200*) simtopo=h200x2 ;; *) simtopo= ;;
    esac
    if [ "$GPUS" = 2 ] && [ -n "$simtopo" ]; then # goring sim's prediction from the same file
      for c in allgather allreduce; do
        # --serial-ce: the push engine issues one GPU's copies on its stream in
        # order (docs/gpu.md "Two GPUs in the simulator").
        "$B/goring" sim "$c" --serial-ce --topo "$simtopo" --calibration "$OUT/cal.json" --bytes 1MiB:256MiB 2>/dev/null | tee "$OUT/sim_$c.txt"
      done
    fi
  else
    cat >"$OUT/cal.json" <<'JSON'
{"schema": "goring.calibration/v1", "host": "one-H100 figures of goring bench p2p run 7 (docs/gpu.md)", "date": "2026-11-25", "ucx_tls": "",
 "paths": [{"path": "direct", "from": "GPU 0", "to": "GPU 1", "alpha_us": 33.8, "beta_GBps": 1321, "rel_rms": 0, "outlier_bytes": [], "samples": []},
           {"path": "host", "from": "GPU 0", "to": "GPU 1", "chunk_bytes": 8388608, "alpha_us": 8.3, "beta_GBps": 50, "rel_rms": 0, "outlier_bytes": [], "samples": []}],
 "contention": [{"path": "host", "from": "GPU 0", "to": "GPU 1", "direct_slowdown": 0.55, "staged_slowdown": 0, "rel_rms": 0, "outlier_samples": [], "samples": []}],
 "skipped": []}
JSON
    grep -v '"contention"' "$OUT/cal.json" | sed 's/"beta_GBps": 50,/"beta_GBps": 400,/' >"$OUT/forced.json"
    cals=(cal forced)
    G=1 NP=2
  fi
  for c in allgather allreduce; do
    extra=(); algs=ring,multiwrite,parallel_rings
    [ $c = allreduce ] && { extra=(--dtype float32 --op sum); algs=ring,lane,recursive_doubling; }
    for a in ${algs//,/ }; do
      for cal in "${cals[@]}"; do
        run "collcal_${c}_${a}_${cal}_validate" "$B/goring" bench "$c" --np $NP --mem cuda --gpus $G --alg "$a" \
          --bytes "16777220,67108868,268435460" --iters 2 --warmup 1 --validate --json --calibration "$OUT/$cal.json" "${extra[@]}"
      done
    done
    for a in ${algs//,/ }; do
      "$B/goring" bench "$c" --np $NP --mem cuda --gpus $G --alg "$a" --bytes 1MiB:256MiB --iters 20 --warmup 5 "${extra[@]}" 2>&1 | tee "$OUT/collcal_${c}_${a}_none.txt"
      for cal in "${cals[@]}"; do
        "$B/goring" bench "$c" --np $NP --mem cuda --gpus $G --alg "$a" --bytes 1MiB:256MiB --iters 20 --warmup 5 --calibration "$OUT/$cal.json" "${extra[@]}" 2>&1 | tee "$OUT/collcal_${c}_${a}_${cal}.txt"
      done
    done
  done
  tar czf "$OUT/logs.tgz" -C "$LOGS" .
  exit $fail
fi

[ "$MODE" = p2p ] && SKIPBENCH=1
step "goring bench --mem cuda, validated (UCX $GORING_LIBUCP)"
for np in 2 3 4 8; do
  for c in allgather allreduce reduce_scatter bcast alltoallv; do
    sizes="1,7,4099,70001,1MiB"
    extra=()
    case $c in
      allreduce) extra=(--dtype float32 --op sum); sizes="4,28,16396,280004,1MiB" ;;
      reduce_scatter) extra=(--dtype int32 --op max); sizes="4,28,16396,280004,1MiB" ;;
    esac
    [ "$MODE" = quick ] && [ "$np" != 4 ] && continue
    [ -n "${SKIPBENCH:-}" ] && continue
    run "bench_${c}_np$np" "$B/goring" bench "$c" --np "$np" --mem cuda --gpus "$GPUS" --bytes "$sizes" \
      --iters 3 --warmup 1 --validate --json "${extra[@]}"
  done
done
for dt in float16:sum bfloat16:prod int8:bxor uint64:min float64:max; do
  [ -n "${SKIPBENCH:-}" ] && continue
  run "bench_allreduce_np4_${dt%%:*}" "$B/goring" bench allreduce --np 4 --mem cuda --gpus "$GPUS" \
    --bytes "8,4096,1MiB,16777224" --iters 2 --warmup 1 --validate --json --dtype "${dt%%:*}" --op "${dt##*:}"
done

if [ "$MODE" = p2p ] || [ "$MODE" = full ]; then
  # One transfer between two processes over every path (Multi-path model):
  # direct push, UCX cuda_ipc, the model's split, the best static split.
  step "goring bench p2p --mem cuda"
  run p2p_json "$B/goring" bench p2p --mem cuda --gpus "$GPUS" --bytes 1MiB:1GiB --json
  cp "$LOGS/p2p_json.log" "$OUT/p2p.json"
  "$B/goring" bench p2p --mem cuda --gpus "$GPUS" --bytes 1MiB:1GiB 2>&1 | tee "$OUT/p2p.txt"
fi
[ "$MODE" = p2p ] && { tar czf "$OUT/logs.tgz" -C "$LOGS" .; exit $fail; }

if [ "$MODE" != quick ]; then
  step "large messages, validated: 4 processes, up to 256 MiB per rank"
  for c in allgather allreduce reduce_scatter bcast alltoallv; do
    extra=()
    case $c in allreduce|reduce_scatter) extra=(--dtype float32 --op sum) ;; esac
    run "big_${c}_np4" "$B/goring" bench "$c" --np 4 --mem cuda --gpus "$GPUS" --bytes "16777220,268435456" \
      --iters 2 --warmup 1 --validate --json "${extra[@]}"
    grep -o '"bytes":[0-9]*' "$LOGS/big_${c}_np4.log" | sort -u | tr '\n' ' ' | sed "s/^/  $c rows: /"; echo
  done
fi

if [ "$MODE" = full ]; then # "correct": the checks without this table
  # goring's own CUDA IPC push (--ipc, the default) against the same
  # collectives through UCX's cuda_ipc (--ipc=false), same run.
  step "speed: 4 processes, --mem cuda, push engine vs UCX cuda_ipc"
  for c in allgather allreduce; do
    for ipc in true false; do
      "$B/goring" bench "$c" --np 4 --mem cuda --gpus "$GPUS" --ipc=$ipc --bytes 4MiB:256MiB --iters 20 --warmup 5 2>&1 | tee "$OUT/speed_${c}_ipc_$ipc.txt"
    done
  done
fi
tar czf "$OUT/logs.tgz" -C "$LOGS" .
echo
[ $fail = 0 ] && echo "device_test: all passed" || echo "device_test: FAILURES above (logs in $OUT/logs.tgz)"
exit $fail
