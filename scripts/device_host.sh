#!/usr/bin/env bash
# device_host.sh: host-memory collectives on a machine with cores to
# spare (the GPU machines have 16 or more), where the Multi-lane paper's
# CPU workers have cores to run on and the 2-core development machine has
# none. In one run, every configuration with the same launcher settings
# (--bind-to none, so a rank's threads are not held to one core):
#   - Open MPI's own collectives (the machine's Open MPI, ob1 over vader,
#     coll/ucc and hcoll off), timed by tests/osu/osu_coll.c;
#   - UCC's tl/ucp (ucc_perftest -m host, UCC built by device_ucc.sh);
#   - tl/goring forced, with 1 lane and with LANES lanes;
#   - tl/goring forced with cross-memory reads on CROSSMEM threads
#     (UCC_TL_GORING_CROSSMEM; none unless CROSSMEM names thread counts).
# Nothing is kept but the tables, in $OUT/host.log.
#
#   bash .carry/device_host.sh            # NPS="2 4" LANES="2 4" by default
#   CROSSMEM="2 4" LANES=4 bash .carry/device_host.sh
set -uo pipefail
cd "$(dirname "$0")"
C=$PWD
ROOT=$(cd "$C/.." && pwd)
OUT=${OUT:-/tmp/goring-device}
mkdir -p "$OUT"
T=/tmp/goring-host # each run's whole output; $OUT gets the one log
mkdir -p "$T"
NPS=${NPS:-2 4}
LANES=${LANES:-2 4}
CROSSMEM=${CROSSMEM:-}
COLLS=${COLLS:-allreduce allgather}
exec > >(tee -a "$OUT/host.log") 2>&1 # one log: the device tool brings back few files
echo "== machine: $(nproc) cores"
lscpu | grep -E "^Model name|^Socket|^NUMA node\(s\)|^Thread" | sed 's/  */ /g'
command -v mpicc >/dev/null || { echo "device_host: skipped: no mpicc on this machine"; exit 0; }
mpirun --version | head -1
# One thread's copy and float32-sum rates and every core copying at once,
# with goring's own kernels (tune's BenchmarkHostRates), when carried.
[ -x "$C/bin/tune.test" ] && "$C/bin/tune.test" -test.run - -test.bench HostRates -test.benchtime 40x -test.count 3 | grep -E "^Bench"
BUILD_ONLY=1 bash "$C/device_ucc.sh" || exit 1
W=/tmp/ucc-build
P=$W/install/bin/ucc_perftest
UCX=$C/.deps/ucx-cu13/libucx
export LD_LIBRARY_PATH=$W/install/lib:$UCX/lib
mpicc -O2 -o /tmp/osu_coll "$ROOT/tests/osu/osu_coll.c" || exit 1
RUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader)
# ucc_perftest counts float32 elements: 1 MiB .. 16 MiB per rank unless
# B and E say otherwise.
B=${B:-262144} E=${E:-4194304}
if [ -n "$CROSSMEM" ]; then
  # The reads between sibling processes of this machine's launcher, checked
  # by UCC's own test before anything is timed.
  echo "== ucc_test_mpi, 4 ranks, allreduce and allgather by cross-memory reads (CROSSMEM=2, every size)"
  timeout 200 "${RUN[@]}" -np 4 -x LD_LIBRARY_PATH -x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=allgather,allreduce:inf \
    -x UCC_TL_GORING_CROSSMEM=2 -x UCC_TL_GORING_CPATH_MAX=0 -x UCC_TL_GORING_LOG_LEVEL=trace "$W/install/bin/ucc_test_mpi" \
    -c allgather,allreduce -t world,half,reverse,odd_even -M host -d int32,float32,float64 -o sum,max -m 1:16777216 -I 2 -i 2 \
    >"$T/xm_test.txt" 2>&1
  sed -n '/TEST REPORT/,/elapsed/p' "$T/xm_test.txt"
  grep -o 'goring task [^:]* ran: [a-z_]*' "$T/xm_test.txt" | awk '{print $NF}' | sort | uniq -c
fi
for np in $NPS; do
  for c in $COLLS; do
    echo "== $c, $np ranks, Open MPI's own (osu_coll, bytes per rank)"
    "${RUN[@]}" -np "$np" --mca coll ^ucc,hcoll /tmp/osu_coll "$c" 1M 16M 100 10 2>&1 | tee "$T/ompi_${c}_$np.txt" | grep -vE "^#|^$"
    U=(-x LD_LIBRARY_PATH -x UCX_MEMTYPE_CACHE=n)
    echo "== $c, $np ranks, tl/ucp (ucc_perftest -m host, counts)"
    timeout 120 "${RUN[@]}" -np "$np" "${U[@]}" -x UCC_TLS=ucp "$P" -c "$c" -m host -b $B -e $E -n 100 -w 10 -F 2>&1 |
      tee "$T/ucp_${c}_$np.txt" | grep -E "^ +[0-9]+ |Count|ERROR"
    for l in 1 $LANES; do
      echo "== $c, $np ranks, tl/goring forced, $l lane(s)"
      timeout 120 "${RUN[@]}" -np "$np" "${U[@]}" -x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE="$c:inf" -x UCC_TL_GORING_LANES="$l" \
        "$P" -c "$c" -m host -b $B -e $E -n 100 -w 10 -F 2>&1 | tee "$T/goring_${c}_${np}_L$l.txt" | grep -E "^ +[0-9]+ |Count|ERROR|rror"
    done
    for x in $CROSSMEM; do
      echo "== $c, $np ranks, tl/goring forced, cross-memory reads on $x thread(s)"
      timeout 120 "${RUN[@]}" -np "$np" "${U[@]}" -x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE="$c:inf" -x UCC_TL_GORING_CROSSMEM="$x" \
        "$P" -c "$c" -m host -b $B -e $E -n 100 -w 10 -F 2>&1 | tee "$T/goring_${c}_${np}_X$x.txt" | grep -E "^ +[0-9]+ |Count|ERROR|rror"
    done
  done
done
