#!/usr/bin/env bash
# device_ucc.sh: the baseline of goring's GPU numbers on a GPU machine:
# UCC v1.8.0 built there (from the pinned release, autogen'd beforehand
# and carried as .carry/ucc-autogen.tar.gz) against the carried
# CUDA-enabled UCX, then ucc_perftest with UCC's own tl/ucp on CUDA
# buffers, N processes on the machine's GPUs. Nothing of it is kept.
#
#   bash .carry/device_ucc.sh [np]        # OUT=dir keeps the tables
set -uo pipefail
cd "$(dirname "$0")"
C=$PWD
NP=${1:-4}
OUT=${OUT:-/tmp/goring-device}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
UCX=$C/.deps/ucx-cu13/libucx
[ -f ucc-autogen.tar.gz ] || { echo "device_ucc: skipped: no .carry/ucc-autogen.tar.gz"; exit 0; }
command -v mpicc >/dev/null || { echo "device_ucc: skipped: no mpicc on this machine"; exit 0; }
CUDA=${CUDA_HOME:-/usr/local/cuda}
[ -x "$CUDA/bin/nvcc" ] || { echo "device_ucc: skipped: no nvcc under $CUDA"; exit 0; }
# The carried UCX has its runtime libraries only: names to link against.
for l in ucp uct ucs ucm; do ln -sf "lib$l.so.0" "$UCX/lib/lib$l.so"; done
W=/tmp/ucc-build
t0=$SECONDS
if [ -x "$W/install/bin/ucc_perftest" ]; then
  echo "device_ucc: UCC already built in $W (a warm machine)"
else
rm -rf "$W" && mkdir -p "$W" && tar xzf ucc-autogen.tar.gz -C "$W"
cd "$W/ucc"
major=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
LDFLAGS="-Wl,-rpath,$UCX/lib" ./configure --prefix="$W/install" --with-ucx="$UCX" --with-cuda="$CUDA" \
  --with-mpi --with-tls=ucp,self --with-nvcc-gencode="-gencode=arch=compute_$major,code=sm_$major" \
  --disable-gtest >"$OUT/ucc_configure.log" 2>&1 || { echo "device_ucc: configure failed"; tail -20 "$OUT/ucc_configure.log"; exit 1; }
make -j"$(nproc)" install >"$OUT/ucc_make.log" 2>&1 || { echo "device_ucc: make failed"; tail -30 "$OUT/ucc_make.log"; exit 1; }
echo "device_ucc: UCC built in $((SECONDS - t0)) s"
fi
# tl/goring: cshim compiled here against this UCC, with the carried
# libgoring.so beside it in UCC's component folder (again on a warm
# machine: the carried library may be newer).
ROOT=$(cd "$C/.." && pwd)
if [ -f "$C/lib/libgoring.so" ] && [ "${GORING:-1}" = 1 ]; then
  gcc -shared -fPIC -O2 -I"$W/ucc" -I"$W/ucc/src" -I"$W/install/include" -I"$UCX/include" -I"$ROOT/cshim" -I"$ROOT/ucc_tl_goring" \
    "$ROOT"/cshim/tl_goring*.c -L"$C/lib" -lgoring -L"$W/install/lib" -lucc -Wl,-rpath,'$ORIGIN' \
    -o "$W/install/lib/ucc/libucc_tl_goring.so" || { echo "device_ucc: tl/goring does not compile"; exit 1; }
  cp "$C/lib/libgoring.so" "$W/install/lib/ucc/"
fi
# BUILD_ONLY=1: build (in the background of other work), measure later.
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0
P=$W/install/bin/ucc_perftest
export LD_LIBRARY_PATH=$W/install/lib:$UCX/lib
# Open MPI (the machine's, over its own UCX) only launches and bootstraps:
# ob1 keeps it off UCX, so the process holds one libucp, the carried one.
# UCX_MEMTYPE_CACHE=n: with it on, UCX took UCC's CUDA buffers for host
# memory and every receive failed (Input/output error), as it did for
# goring (ucx/context.go). op ^avx: that Open MPI's AVX reductions
# saturate 8-bit sums that overflow (ucc_test_mpi's reference, MPI's,
# then disagrees with every layer: docs/ucc.md).
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np "$NP" --mca pml ob1 --mca btl self,vader --mca op ^avx
  -x LD_LIBRARY_PATH -x UCC_TLS=ucp -x UCX_MEMTYPE_CACHE=n -x NCCL_NVLS_ENABLE)
# -b/-e are element counts: float32, 4 MiB to 256 MiB per rank (MAXCOUNT
# lowers the top; BASELINE=0 skips tl/ucp, GORING=0 skips tl/goring).
# ITERS/WARMUP: iterations a size (20 after 5, the recorded tables'; a
# 20-call average at 4 MiB moves by 10% between runs, more iterations
# steady it).
MAXCOUNT=${MAXCOUNT:-67108864}
NW=(-n "${ITERS:-20}" -w "${WARMUP:-5}")
[ "${BASELINE:-1}" = 1 ] && for c in ${BASELINE_COLLS:-allgather allreduce}; do
  echo "== ucc_perftest -c $c -m cuda, $NP processes, UCC_TLS=ucp (tl/ucp over UCX cuda_ipc)"
  # tl/ucp's allreduce on CUDA buffers of 8 MiB and more never finished
  # here (UCX 1.22, UCC 1.8.0): bounded, so the rest of the run happens.
  timeout "${BASELINE_TIMEOUT:-90}" "${MPIRUN[@]}" "$P" -c "$c" -m cuda -b 1048576 -e "$MAXCOUNT" "${NW[@]}" -F 2>&1 | tee "$OUT/ucc_perftest_$c.txt" | grep -E "^ +[0-9]+ |Count|ERROR" || echo "device_ucc: tl/ucp $c did not finish within ${BASELINE_TIMEOUT:-90} s"
done
# goring's score raised to inf for its collectives so UCC picks it, and
# UCC's trace shows it.
if [ -f "$C/lib/libgoring.so" ] && [ "${GORING:-1}" = 1 ]; then
  GC=${GORING_COLLS:-allgather allreduce}
  G=(-x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=${GC// /,}:inf)
  # SELECT=model: no TUNE string, goring's own scores (its model,
  # docs/ucc.md "Default scores from the model") decide which layer runs.
  [ "${SELECT:-tune}" = model ] && G=(-x UCC_TLS=ucp,goring)
  # GORING_ENV="VAR=value ...": more settings for the tl/goring runs.
  for e in ${GORING_ENV:-}; do G+=(-x "$e"); done
  # Correctness first: UCC's own test on CUDA buffers, goring's score
  # raised for its four collectives, every team shape, 1 B to 4 MiB.
  if [ "${CHECK:-1}" = 1 ]; then
    T=(-x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=allgather,allreduce,reduce_scatter,bcast:inf)
    echo "== ucc_test_mpi -M cuda through tl/goring, $NP processes"
    "${MPIRUN[@]}" "${T[@]}" -x UCC_COLL_TRACE=info "$W/install/bin/ucc_test_mpi" -c allgather,bcast,allreduce,reduce_scatter \
      -M cuda -m 4096:4096 -d float32 -o sum 2>&1 | grep -o "TL_[A-Z]*" | sort | uniq -c | head -5
    timeout 150 "${MPIRUN[@]}" "${T[@]}" "$W/install/bin/ucc_test_mpi" -c allgather,bcast -t world,half,reverse,odd_even \
      -M cuda -d int8,int32,float64 -m 1:4194304 2>&1 | tee "$OUT/ucc_test_mpi_cuda_ag.txt" | sed -n '/TEST REPORT/,/elapsed/p'
    timeout 150 "${MPIRUN[@]}" "${T[@]}" "$W/install/bin/ucc_test_mpi" -c allreduce,reduce_scatter -t world,half,reverse,odd_even \
      -M cuda -d int32,int64,float32,float64 -o sum,max,prod,bxor -m 4:4194304 2>&1 | tee "$OUT/ucc_test_mpi_cuda_ar.txt" | sed -n '/TEST REPORT/,/elapsed/p'
  fi
  for c in $GC; do
    echo "== ucc_perftest -c $c -m cuda, $NP processes, tl/goring (UCC trace: which TL ran)"
    for n in 16 1048576; do
      echo "which layer ran at $n elements per rank:"
      "${MPIRUN[@]}" "${G[@]}" -x UCC_COLL_TRACE=info -x UCC_TL_GORING_LOG_LEVEL=debug "$P" -c "$c" -m cuda -b "$n" -e "$n" -n 2 -w 0 -F 2>&1 |
        tee "$OUT/trace_${c}_$n.txt" | grep -o "TL_[A-Z]*}\|goring's model on a team .*" | sort | uniq -c | head -5
    done
    timeout 120 "${MPIRUN[@]}" "${G[@]}" "$P" -c "$c" -m cuda -b 1048576 -e "$MAXCOUNT" "${NW[@]}" -F 2>&1 | tee "$OUT/ucc_perftest_goring_$c.txt" | grep -E "^ +[0-9]+ |Count|ERROR|rror"
  done
fi
