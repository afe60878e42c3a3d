#!/usr/bin/env bash
# gpupause: a small GPU allreduce through goring.h after the calling
# thread spent a while in C (gpu_pause.c), with and without the runtime
# keeper (team/awake.go), beside the same for host memory on the Go path
# (tests/capi/capi_test.c with cpath_max=0). Runs where CUDA, mpicc and
# mpirun are; LIB is the folder of libgoring.so (make capi's build/) and
# of capi_test, UCX the folder of the UCX libucp.so.0 it loads.
#
#   LIB=build UCX=/path/to/ucx/lib NP=4 experiments/gpupause/run.sh [pause_us ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
LIB=$(cd "${LIB:-$root/build}" && pwd)
CUDA=${CUDA_HOME:-/usr/local/cuda}
NP=${NP:-4}
pauses=${*:-5000}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mpicc -O2 -Wall -I"$CUDA/include" -I"$root/ucc_tl_goring" "$here/gpu_pause.c" \
  -L"$CUDA/lib64" -lcudart -L"$LIB" -lgoring -Wl,-rpath,"$LIB" -o "$t/gpu_pause"
env=(-x LD_LIBRARY_PATH="$UCX:$LIB:${LD_LIBRARY_PATH:-}" -x GORING_LIBUCP="$UCX/libucp.so.0" -x UCX_MEMTYPE_CACHE=n)
run() { mpirun -np "$NP" --allow-run-as-root --oversubscribe --bind-to none "${env[@]}" "$@"; }
for round in 1 2 3; do
  for p in $pauses; do
    for keeper in "" "keepawake=5ms"; do
      echo "round $round, pause $p us, options '${keeper}'"
      run "$t/gpu_pause" 200 "$p" 4096 "$keeper"
      run "$LIB/capi_test" 200 "cpath_max=0;${keeper}" 2>&1 | grep "after 5 ms" || true
    done
  done
done
