#!/usr/bin/env bash
# device_osu.sh: the users' own path on a GPU machine: Open MPI 4.1.8 with
# coll/ucc, UCC 1.8.0 and OMB 7.4 (--enable-cuda), all built there from the
# pinned release sources (Open MPI's and UCC's autogen'd here: the device
# has no autotools) that scripts/device_bundle.sh osu puts in .carry-osu/,
# against the carried CUDA-enabled UCX; then osu_allgather and
# osu_allreduce -d cuda, validated (-c), through coll/ucc with UCC's tl/ucp
# and with tl/goring, in one run. Nothing of it is kept but what pack
# brings back.
#
#   bash .carry-osu/device_osu.sh build     # ~6 min on 16 cores, idempotent
#   bash .carry-osu/device_osu.sh pack      # the built stack as parts under $OUT, for a later call
#   bash .carry-osu/device_osu.sh run [np]  # the table (builds first if needed)
#   bash .carry-osu/device_osu.sh host      # host memory, the machine's cores: OMB
#       # through coll/ucc, Open MPI's own, tl/ucp and the shipped ompi-config/
#       # (crossmem=auto), interleaved rounds (tests/osu/omb_ucc.sh), NPS="2 4"; LAUNCH
#       # replaces the launcher options (default: --bind-to none, Open MPI's own pml choice)
#   bash .carry-osu/device_osu.sh split     # the communicator loop of tests/stack/robust.c
#       # with the shipped settings against UCC's own layers (ROUNDS, default 1000)
#   bash .carry-osu/device_osu.sh small     # goring forced against tl/ucp for small host
#       # messages: robust.c's pause (PAUSES rounds, default 5, interleaved) and OMB
#       # 1 B-8 KiB (tests/osu/omb_ucc.sh, NPS="2 4"), on a machine quieter than 2 cores
#   bash .carry-osu/device_osu.sh ownsmall  # Open MPI's own small host collectives under
#       # pml ob1, pml ucx, and pml ucx with UCX_MEMTYPE_CACHE=n, beside tl/ucp (NPS, ROUNDS;
#       # CFGS picks other launchers: tl/ucp under ob1, with no GPU visible, the hand-over)
#   bash .carry-osu/device_osu.sh probe NP COLL TL BYTES [SECS]
#       # one OSU size through tl/TL; a rank still running after SECS (default 60)
#       # gets SIGQUIT, so the Go runtime prints every goroutine's stack
set -uo pipefail
cd "$(dirname "$0")"
C=$PWD
MODE=${1:-run}
NP=${2:-4}
OUT=${OUT:-/tmp/goring-device}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
UCX=$C/../.carry/.deps/ucx-cu13/libucx # carried beside, in .carry (device_bundle.sh)
[ -d "$UCX" ] || { echo "device_osu: no UCX at $UCX: carry .carry too"; exit 1; }
CUDA=${CUDA_HOME:-/usr/local/cuda}
W=/tmp/goring-osu
J=$(nproc)
for l in ucp uct ucs ucm; do ln -sf "lib$l.so.0" "$UCX/lib/lib$l.so"; done
step() { # step NAME CMD...: once (marker), log in $W/NAME.log
  local name=$1; shift
  [ -f "$W/.done-$name" ] && return 0
  local t0=$SECONDS
  if (set -e; "$@") >"$W/$name.log" 2>&1; then
    touch "$W/.done-$name"; echo "device_osu: $name built in $((SECONDS - t0)) s"
  else
    echo "device_osu: $name FAILED"; tail -25 "$W/$name.log"; exit 1
  fi
}
build_ucc() {
  rm -rf "$W/ucc-src" && mkdir -p "$W/ucc-src" && tar xzf "$C/ucc-autogen.tar.gz" -C "$W/ucc-src" --strip-components=1
  cd "$W/ucc-src"
  local major; major=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  ./configure --prefix="$W/ucc" --with-ucx="$UCX" --with-cuda="$CUDA" --with-tls=ucp,self \
    --with-nvcc-gencode="-gencode=arch=compute_$major,code=sm_$major" --disable-gtest --with-mpi=no \
    LDFLAGS="-Wl,-rpath,$UCX/lib"
  make -j"$J" install
}
# install_tl puts this tree's team layer into the UCC built above: on
# every call, so that a UCC built (or unpacked) earlier runs the carried
# libgoring.so, not the one of its build.
install_tl() {
  gcc -shared -fPIC -O2 -I"$W/ucc-src" -I"$W/ucc-src/src" -I"$W/ucc/include" -I"$UCX/include" -I"$C/cshim" \
    "$C"/cshim/tl_goring*.c -L"$C/lib" -lgoring -L"$W/ucc/lib" -lucc -Wl,-rpath,'$ORIGIN' \
    -o "$W/ucc/lib/ucc/libucc_tl_goring.so"
  cp "$C/lib/libgoring.so" "$W/ucc/lib/ucc/"
}
build_ompi() { # coll/ucc is configured against the UCC built first
  rm -rf "$W/ompi-src" && mkdir -p "$W/ompi-src" && tar xf "$C/ompi-4.1.8.tar.xz" -C "$W/ompi-src" --strip-components=1
  cd "$W/ompi-src"
  ./configure --prefix="$W/ompi" --with-ucx="$UCX" --with-ucc="$W/ucc" --with-cuda="$CUDA" --disable-mpi-fortran \
    --disable-io-romio --disable-mpi-cxx --without-verbs --enable-mca-no-build=btl-openib,btl-usnic,btl-uct,coll-han,coll-adapt \
    LDFLAGS="-Wl,-rpath,$UCX/lib -Wl,-rpath,$W/ucc/lib"
  make -j"$J" install
  "$W/ompi/bin/ompi_info" | grep -i "coll: ucc"
}
build_omb() {
  rm -rf "$W/omb-src" && mkdir -p "$W/omb-src" && tar xzf "$C/osu-micro-benchmarks-7.4.tar.gz" -C "$W/omb-src" --strip-components=1
  cd "$W/omb-src"
  # OMB 7.4 predates CUDA 13, whose cudaMemPrefetchAsync takes a location
  # and flags: a forced-in header maps the old call onto the new one.
  cat >"$W/omb_cuda13.h" <<'H'
#include <cuda_runtime_api.h>
#if CUDART_VERSION >= 13000
static inline cudaError_t omb_prefetch(const void *p, size_t n, int dev, cudaStream_t s)
{
    struct cudaMemLocation l = {cudaMemLocationTypeDevice, dev};
    return cudaMemPrefetchAsync(p, n, l, 0, s);
}
#define cudaMemPrefetchAsync omb_prefetch
#endif
H
  ./configure CC="$W/ompi/bin/mpicc" CXX="$W/ompi/bin/mpicxx" --enable-cuda --with-cuda="$CUDA" --prefix="$W/omb"
  make -j"$J" CFLAGS="-O2 -include $W/omb_cuda13.h"
}
mkdir -p "$W"
# A stack built by an earlier call (pack, then unpacked into $W) needs no sources.
[ -f "$W/.done-ompi" ] || [ -f "$C/ompi-4.1.8.tar.xz" ] || { echo "device_osu: no ompi-4.1.8.tar.xz in $C"; exit 1; }
step ucc build_ucc
step ompi build_ompi
step omb build_omb
install_tl || { echo "device_osu: the team layer did not build"; exit 1; }
[ "$MODE" = build ] && exit 0
if [ "$MODE" = pack ]; then
  # The built stack (installs, OMB's benchmarks, UCC's headers for
  # install_tl) as xz parts under $OUT, at most 15 MiB each (what the
  # device tool brings back), so that a later machine unpacks them into
  # /tmp instead of building for 7 minutes:
  #   cat .carry-stack/stack.tar.xz.* | xz -d | tar xf - -C /tmp
  (cd /tmp && find goring-osu/ucc-src -name '*.h' >/tmp/goring-pack.list &&
    tar cf - goring-osu/ucc goring-osu/ompi goring-osu/omb-src/c/mpi/collective/blocking goring-osu/.done-* \
      -T /tmp/goring-pack.list | xz -T0 -6 | split -b 15M - "$OUT/stack.tar.xz.")
  ls -la "$OUT"/stack.tar.xz.*
  exit 0
fi

export LD_LIBRARY_PATH=$W/ucc/lib:$UCX/lib:$W/ompi/lib
B=$W/omb-src/c/mpi/collective/blocking
MPIRUN=("$W/ompi/bin/mpirun" --allow-run-as-root --oversubscribe -np "$NP" --mca pml ucx --mca btl ^openib,uct
  --mca coll_ucc_enable 1 --mca coll_ucc_priority 100 -x LD_LIBRARY_PATH -x UCX_MEMTYPE_CACHE=n -x NCCL_NVLS_ENABLE)
# CUDA_VISIBLE_DEVICES=0: every rank on one GPU of several (OMB maps local ranks to visible GPUs).
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && MPIRUN+=(-x CUDA_VISIBLE_DEVICES)
if [ "$MODE" = host ]; then
  # Every configuration with the same launcher: the pml Open MPI picks by
  # itself (ob1 on a host without a network device UCX supports, what a
  # user gets: docs/ucc.md "Open MPI's own launcher settings on the Xeon"),
  # ranks not bound to a core each, so that a rank may use the cores the
  # host has to spare (crossmem=auto counts them). The runs before
  # 2026-11-26 evening forced pml ucx with UCX_MEMTYPE_CACHE=n, which slows
  # Open MPI's own collectives 2-27x below 8 KiB: LAUNCH="--bind-to none --mca
  # pml ucx --mca btl ^openib,uct -x UCX_MEMTYPE_CACHE=n" repeats them.
  ROOT=$(cd "$C/.." && pwd)
  for np in ${NPS:-2 4}; do
    echo "== host memory, $np ranks, $(nproc) cores: ${CONFIGS:-ompi ucc_ucp shipped}"
    (cd "$ROOT" && OMB_BIN=$B OMPI_PREFIX=$W/ompi UCC_PREFIX=$W/ucc UCX_PREFIX=$UCX NO_TL_INSTALL=1 \
      MPIRUN_EXTRA="${LAUNCH:---bind-to none}" \
      CONFIGS="${CONFIGS:-ompi ucc_ucp shipped}" NP=$np SIZES=${SIZES:-1:16777216} ROUNDS=${ROUNDS:-3} \
      ITERS=${ITERS:-200} OUT=/tmp/goring-omb-$np bash tests/osu/omb_ucc.sh 2>&1 | grep -vE "^[0-9]|^#|^$|^== round")
    echo "which layer ran the shipped host allreduce and allgather of 4 MiB:"
    for c in allreduce allgather; do
      (cd "$ROOT" && "$W/ompi/bin/mpirun" --allow-run-as-root --oversubscribe -np "$np" --bind-to none --mca pml ucx \
        --mca btl ^openib,uct -x LD_LIBRARY_PATH -x UCX_MEMTYPE_CACHE=n --tune ompi-config/goring-mca-params.conf \
        $(scripts/ucc_env_args.sh ompi-config/goring-ucc.env) -x UCC_COLL_TRACE=info \
        "$B/osu_$c" -m 4194304:4194304 -i 2 -x 0 2>&1 | grep -i "coll_init: $c" | grep -o "TL_[A-Z]*" | sort | uniq -c)
    done
  done
  exit 0
fi
if [ "$MODE" = split ]; then
  # tests/stack/robust.c's communicator loop (MPI_Comm_split, an
  # allreduce, MPI_Comm_free; RSS before and after) on the machine's
  # cores: goring forced with the shipped settings but its TUNE string,
  # then UCC's own layers; 4 ranks, so that the loop's communicators are
  # teams of 2; --bind-to none.
  ROOT=$(cd "$C/.." && pwd)
  "$W/ompi/bin/mpicc" -O2 -Wall "$ROOT/tests/stack/robust.c" -o "$W/robust" || exit 1
  TUNE=$(sed -n 's/^UCC_TL_GORING_TUNE=//p' "$ROOT/ompi-config/goring-ucc-all.env")
  R=(--allow-run-as-root --oversubscribe -np 4 --bind-to none --mca pml ucx --mca btl ^openib,uct -x LD_LIBRARY_PATH
    -x UCX_MEMTYPE_CACHE=n --tune "$ROOT/ompi-config/goring-mca-params.conf")
  for cfg in goring ucp; do
    x=()
    # shellcheck disable=SC2207 # the file's settings are words without spaces
    [ $cfg = goring ] && x=(-x "UCC_TL_GORING_TUNE=$TUNE" $(bash "$ROOT/scripts/ucc_env_args.sh" "$ROOT/ompi-config/goring-ucc.env" | sed 's/-x UCC_TL_GORING_TUNE=[^ ]*//') -x UCC_TL_GORING_LOG_LEVEL=debug)
    t0=$SECONDS
    "$W/ompi/bin/mpirun" "${R[@]}" "${x[@]}" "$W/robust" split "${ROUNDS:-1000}" >"$OUT/split_$cfg.txt" 2>&1 || echo "split $cfg: non-zero exit"
    echo "split $cfg ($((SECONDS - t0)) s): $(grep '^robust split' "$OUT/split_$cfg.txt")"
    grep -o "goring's model on a team of [0-9]* ranks claims [^ ]*" "$OUT/split_$cfg.txt" | sort | uniq -c | head -3
  done
  exit 0
fi
if [ "$MODE" = small ]; then
  # The issue's small-message targets with goring forced (goring-ucc-all.env's
  # TUNE string): 16-float allreduces after 5 ms of computation, 2 ranks,
  # goring and tl/ucp interleaved; then OMB 1 B-8 KiB, both layers
  # interleaved, medians of ROUNDS. Launcher defaults (Open MPI binds the
  # ranks), as tests/stack/robust.sh runs it.
  ROOT=$(cd "$C/.." && pwd)
  "$W/ompi/bin/mpicc" -O2 -Wall "$ROOT/tests/stack/robust.c" -o "$W/robust" || exit 1
  TUNE=$(sed -n 's/^UCC_TL_GORING_TUNE=//p' "$ROOT/ompi-config/goring-ucc-all.env")
  R=(--allow-run-as-root -np 2 --mca pml ucx --mca btl ^openib,uct -x LD_LIBRARY_PATH -x UCX_MEMTYPE_CACHE=n
    --tune "$ROOT/ompi-config/goring-mca-params.conf")
  for ((i = 1; i <= ${PAUSES:-5}; i++)); do
    for cfg in goring ucp; do
      x=()
      [ $cfg = goring ] && x=(-x "UCC_TL_GORING_TUNE=$TUNE")
      echo "pause round $i $cfg: $("$W/ompi/bin/mpirun" "${R[@]}" "${x[@]}" "$W/robust" pause "${PAUSE_CALLS:-200}" 2>&1 | grep '^robust pause')"
    done
  done
  for np in ${NPS:-2 4}; do
    echo "== host memory 1 B-8 KiB, $np ranks: tl/ucp and goring forced"
    (cd "$ROOT" && OMB_BIN=$B OMPI_PREFIX=$W/ompi UCC_PREFIX=$W/ucc UCX_PREFIX=$UCX NO_TL_INSTALL=1 \
      MPIRUN_EXTRA="--mca pml ucx --mca btl ^openib,uct -x UCX_MEMTYPE_CACHE=n" \
      CONFIGS="ucc_ucp ucc_goring" NP=$np SIZES=1:8192 ROUNDS=${ROUNDS:-3} ITERS=${ITERS:-1000} \
      OUT=/tmp/goring-omb-small-$np bash tests/osu/omb_ucc.sh 2>&1 | grep -vE "^[0-9]|^#|^$|^== round|WARN")
  done
  exit 0
fi
if [ "$MODE" = ownsmall ]; then
  # Open MPI's own small host collectives under the pml a user gets (ob1
  # on a host without a network device) and under pml ucx, which every
  # earlier host run here used, beside coll/ucc with tl/ucp (docs/ucc.md
  # "Open MPI's own launcher settings on the Xeon: pml ob1"): OMB 1 B-128
  # KiB, CFGS of the launchers below, ROUNDS interleaved, medians;
  # launcher defaults otherwise.
  ROOT=$(cd "$C/.." && pwd)
  declare -A L=(
    [own_ob1]="--mca pml ob1 --mca btl self,vader --mca coll_ucc_enable 0"
    [own_ucx]="--mca pml ucx --mca btl ^openib,uct --mca coll_ucc_enable 0"
    [own_ucx_nocache]="--mca pml ucx --mca btl ^openib,uct --mca coll_ucc_enable 0 -x UCX_MEMTYPE_CACHE=n"
    [tl_ucp]="--mca pml ucx --mca btl ^openib,uct --mca coll_ucc_enable 1 --mca coll_ucc_priority 100"
    # Under pml ob1: tl/ucp; tl/ucp with no GPU visible (UCC then has no
    # CUDA memory to ask about: coll/ucc passes every buffer's memory type
    # as unknown); and both UCC layers at score 0 below 64 KiB (UCC
    # declines, coll/ucc hands the call to Open MPI's own).
    [ucp_ob1]="--mca pml ob1 --mca btl self,vader --mca coll_ucc_enable 1 --mca coll_ucc_priority 100 -x UCC_TLS=ucp"
    [ucp_ob1_nogpu]="--mca pml ob1 --mca btl self,vader --mca coll_ucc_enable 1 --mca coll_ucc_priority 100 -x UCC_TLS=ucp -x CUDA_VISIBLE_DEVICES="
    [handover_ob1]="--mca pml ob1 --mca btl self,vader --mca coll_ucc_enable 1 --mca coll_ucc_priority 100 -x UCC_TLS=ucp -x UCC_TL_UCP_TUNE=allreduce:host:0-64K:0#allgather:host:0-64K:0"
  )
  read -ra cfgs <<<"${CFGS:-own_ob1 own_ucx own_ucx_nocache tl_ucp}"
  for np in ${NPS:-2 4}; do
    for ((i = 1; i <= ${ROUNDS:-3}; i++)); do
      for cfg in "${cfgs[@]}"; do
        for c in allgather allreduce; do
          # shellcheck disable=SC2086 # the launcher options are words on purpose
          "$W/ompi/bin/mpirun" --allow-run-as-root -np "$np" -x LD_LIBRARY_PATH ${L[$cfg]} \
            "$B/osu_$c" -m 1:131072 -i "${ITERS:-1000}" -x 100 >"$OUT/ownsmall.$np.$c.$cfg.$i.txt" 2>&1 ||
            echo "ownsmall $np $c $cfg round $i: non-zero exit"
        done
      done
    done
  done
  python3 - "$OUT" "${cfgs[@]}" <<'PY'
import collections, glob, statistics, sys
lat = collections.defaultdict(list)
cfgs = sys.argv[2:]
for f in glob.glob(sys.argv[1] + "/ownsmall.*.txt"):
    _, np, c, cfg, _, _ = f.split("/")[-1].split(".")
    for line in open(f):
        p = line.split()
        if len(p) >= 2 and p[0].isdigit():
            lat[(np, c, cfg, int(p[0]))].append(float(p[1]))
print("%3s %10s %8s " % ("np", "coll", "bytes") + " ".join("%16s" % c for c in cfgs) + "   (median us)")
for key in sorted({k[:2] for k in lat}):
    for size in sorted({k[3] for k in lat if k[:2] == key}):
        row = [statistics.median(lat[key + (c, size)]) if lat.get(key + (c, size)) else float("nan") for c in cfgs]
        print("%3s %10s %8d " % (key[0], key[1], size) + " ".join("%16.2f" % v for v in row))
PY
  exit 0
fi
if [ "$MODE" = probe ]; then
  np=$NP c=$3 tl=$4 bytes=$5 secs=${6:-60} # NP: $2, read above
  env=(-x UCC_TLS=ucp)
  [ "$tl" = goring ] && env=(-x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=allgather,allreduce:inf -x GOTRACEBACK=all)
  echo "== probe: osu_$c -d cuda -c -m $bytes:$bytes, $np processes, tl/$tl"
  "${MPIRUN[@]}" "${env[@]}" "$B/osu_$c" -d cuda -c -m "$bytes:$bytes" -M 8589934592 -i 10 -x 2 >"$OUT/probe_${c}_$tl.txt" 2>&1 &
  run=$!
  for ((s = 0; s < secs; s++)); do kill -0 $run 2>/dev/null || break; sleep 1; done
  if kill -0 $run 2>/dev/null; then
    echo "still running after $secs s: SIGQUIT to the ranks"; pkill -QUIT -f "$B/osu_$c"; sleep 5; kill $run 2>/dev/null
  fi
  wait $run; echo "rc=$? after $s s"
  grep -E "^[0-9]|rror|FAIL|Pass" "$OUT/probe_${c}_$tl.txt" | head
  exit 0
fi
# SELECT picks how goring is chosen in its runs: tune (the default: its
# score raised for both collectives), model (no TUNE string: goring's own
# scores decide), shipped (ompi-config/goring-ucc.env, as a user turns it on).
SHIP=$(cd "$C/.." && pwd)/ompi-config/goring-ucc.env
for c in allgather allreduce; do
  for tl in ${TLS:-ucp goring}; do # TLS=goring: no tl/ucp baseline
    env=(-x UCC_TLS=ucp)
    case "$tl/${SELECT:-tune}" in
    goring/model) env=(-x UCC_TLS=ucp,goring) ;;
    # shellcheck disable=SC2207 # the file's settings are words without spaces
    goring/shipped) env=(-x UCC_TLS=ucp,goring $(bash "$(dirname "$SHIP")/../scripts/ucc_env_args.sh" "$SHIP")) ;;
    goring/*) env=(-x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=allgather,allreduce:inf) ;;
    esac
    echo "== osu_$c -d cuda -c, $NP processes, coll/ucc with tl/$tl"
    # -M: OMB's memory limit per process (default 1 GiB) would stop allgather at 64 MiB per rank.
    timeout 150 "${MPIRUN[@]}" "${env[@]}" "$B/osu_$c" -d cuda -c -m 4194304:268435456 -M 8589934592 -i 10 -x 2 2>&1 | tee "$OUT/osu_${c}_$tl.txt" | grep -E "^#|^[0-9]|rror|FAIL" | head -14
    if [ $tl = goring ]; then
      for m in 4096 4194304; do
        echo "which layer ran the CUDA $c of $m bytes:"
        timeout 30 "${MPIRUN[@]}" "${env[@]}" -x UCC_COLL_TRACE=info "$B/osu_$c" -d cuda -m "$m:$m" -i 2 -x 0 2>&1 |
          grep -i "coll_init: $c.*Cuda" | grep -o "TL_[A-Z]*" | sort | uniq -c
      done
    fi
  done
done
