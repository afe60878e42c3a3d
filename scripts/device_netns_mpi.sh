# shellcheck shell=bash disable=SC2154,SC2034,SC2054 # sourced: ROOT, C, B, OUT, LOGS, NODES, PPN, RAILS, RATE, PREFIX, TB, run, step, fail (set here too); commas in -x values
# device_netns_mpi.sh: the MPI half of device_netns.sh's testbed runs,
# sourced by it for its mode "mpi" once the testbed is up: the users' own
# stacks across the namespaced nodes, every rank started in its node's
# namespace on its node's rails (tests/netns/in_node.sh), CUDA buffers.
# It defines mpi_start (1), mpi_check (2), mpi_perf (3) and mpi_omb (4);
# device_netns.sh runs 1-3, its own timing (mode time), then 4, so that
# Open MPI's long build overlaps the rest.
#
# 1. builds, side by side: UCC 1.8.0 with tl/goring against the image's MPI
#    (.carry/device_node.sh BUILD_ONLY=1, for ucc_test_mpi), and Open MPI
#    4.1.8 with coll/ucc, its own UCC and OMB 7.4 (.carry-osu/device_osu.sh
#    build); a warm machine reuses both;
# 2. (CHECK=1) ucc_test_mpi -M cuda (-S 1: GPU = the rank's local rank on
#    the machine, so node k's ranks drive GPUs k*PPN...) with every
#    collective goring runs forced onto goring, teams world, half, reverse
#    and odd_even, odd sizes (CHECK_MSG, 7:4194304:5), in place and not: 0
#    failures, every rank's team placed on NODES nodes, bytes on the rails;
# 3. (PERF=1) ucc_perftest -m cuda, allgather and allreduce, 1-64 MiB a
#    rank (PERF_COLLS, PERF_MIN/PERF_MAX in floats, PERF_ITERS): tl/goring
#    forced, tl/ucp with UCX's defaults and with a lane per rail
#    (UCX_MAX_EAGER_LANES=RAILS, what goring's context sets itself), and
#    tl/nccl over sockets (NCCL_HOSTID per node), each run's rail bytes;
#    PERF_CFGS picks among those and goring_staged (UCX given no CUDA
#    transport: goring stages device buffers through pinned host memory
#    itself, as goring bench does on the rails) and goring_pull (UCX's
#    rendezvous pulled, UCX_RNDV_SCHEME=get_zcopy);
# 4. (OMB=1) osu_allgather and osu_allreduce -d cuda, 1-64 MiB, through
#    Open MPI's own collectives over UCX (coll/ucc off: the papers' baseline),
#    through coll/ucc with UCC's tl/ucp, and with tl/goring forced; the
#    bytes each run put on the rails.
#
# Open MPI's pml ucx takes UCX's TCP only when told that any transport
# and device will do (by default it wants InfiniBand or cuda_ipc).
# UCX carries everything between nodes over TCP on the rails, with
# cuda_copy staging device buffers (in_node.sh says why shared memory and
# cuda_ipc are off); inside a node Open MPI's and tl/ucp's device buffers
# go the same way, goring's through its own CUDA IPC push (same node only).
MW=${MPI_W:-/tmp/goring-netns-mpi}
mkdir -p "$MW"
UCX=$C/.deps/ucx-cu13/libucx
NW=/tmp/ucc-build-node/install # device_node.sh's UCC
OW=/tmp/goring-osu             # device_osu.sh's stack
NP=$((NODES * PPN))
RELAY=$B/pmixrelay
export RELAY PPN RAILS PREFIX
MT=${MPI_TIMEOUT:-240}

mpi_start() { # both builds in the background; waits for the first
  step "MPI stacks: UCC with tl/goring for the image's MPI, Open MPI 4.1.8 + coll/ucc + OMB 7.4 (side by side)"
  { command -v mpirun && mpirun --version 2>&1 | head -2; } >"$LOGS/image_mpi.txt" 2>&1
  t0=$SECONDS
  (BUILD_ONLY=1 OUT="$MW/node" bash "$C/device_node.sh" >"$LOGS/build_node.log" 2>&1) &
  nb=$!
  ob=
  if [ "${OMB:-1}" = 1 ]; then
    (bash "$ROOT/.carry-osu/device_osu.sh" build >"$LOGS/build_osu.log" 2>&1) &
    ob=$!
  fi
  if wait $nb && [ -x "$NW/bin/ucc_test_mpi" ]; then
    echo "ok   build_ucc_node ($((SECONDS - t0)) s)" | tee -a "$OUT/summary.txt"
  else
    echo "FAIL build_ucc_node" | tee -a "$OUT/summary.txt"; tail -15 "$LOGS/build_node.log"; fail=1
  fi
}

# The image's MPI launches; UCC and goring carry the data (ob1 on shared
# memory holds Open MPI's own few messages off UCX).
# NLIBS: UCC's, UCX's and NCCL's libraries (the folder device_node.sh
# found NCCL in), known once that build has run.
nlibs() { NLIBS=$NW/lib:$UCX/lib$(sed -n 's/^\(.\)/:\1/p' "$NW/../nccl_libdir" 2>/dev/null); }
mpi_check() {
  nlibs
  [ "${CHECK:-1}" = 1 ] && [ -x "$NW/bin/ucc_test_mpi" ] || return 0
  step "ucc_test_mpi -M cuda through goring across $NODES nodes x $PPN GPUs, $RAILS rails at $RATE"
  before=$(railsum)
  tune=allgather,allreduce,reduce_scatter,bcast,alltoall,alltoallv:inf
  run ucc_test_mpi_cuda timeout -k 5 "$MT" env LD_LIBRARY_PATH="$NLIBS" \
    mpirun --allow-run-as-root --oversubscribe -np "$NP" --mca pml ob1 --mca btl self,vader \
    -x LD_LIBRARY_PATH -x UCC_TLS=ucp,goring -x UCC_TL_GORING_TUNE=$tune -x GORING_TEAM_PLACEMENT=1 \
    -x UCX_TLS=self,tcp,cuda_copy -x UCX_MEMTYPE_CACHE=n -x GORING_STACKS_AFTER=$((MT - 30))s \
    -x PREFIX -x PPN -x RAILS -x RELAY -x NCCL_NVLS_ENABLE=0 \
    "$ROOT/tests/netns/in_node.sh" "$NW/bin/ucc_test_mpi" -S 1 \
    -c allgather,allreduce,reduce_scatter,bcast,alltoallv -t world,half,reverse,odd_even -M cuda \
    -d int32,float32,float64 -o sum,max -m "${CHECK_MSG:-7:4194304:5}" -I 2
  after=$(railsum)
  l=$LOGS/ucc_test_mpi_cuda.log
  sed -n '/TEST SUMMARY/,/elapsed/p' "$l"
  grep -q 'failed: *0' "$l" || { echo "FAIL ucc_test_mpi_cuda: failures (or no summary)" | tee -a "$OUT/summary.txt"; fail=1; }
  n=$(grep -c "goring team: rank [0-9]* of $NP, $NODES node(s) of $PPN rank(s)" "$l" || true)
  echo "ucc_test_mpi_cuda: $n team placements on $NODES nodes, $((after - before)) bytes on the rails" | tee -a "$OUT/summary.txt"
  [ "$n" -ge "$NP" ] || { echo "FAIL ucc_test_mpi_cuda: ranks not placed on $NODES nodes" | tee -a "$OUT/summary.txt"; fail=1; }
}

# rails: bytes each rail carried so far, all nodes together, one line.
rails() { "$TB" sent rails | tr '\n' ' '; }
railsum() { "$TB" sent total; }

mpi_perf() {
  [ "${PERF:-1}" = 1 ] && [ -x "$NW/bin/ucc_perftest" ] || return 0
  nlibs
  step "ucc_perftest -m cuda across $NODES nodes x $PPN GPUs, $RAILS rails at $RATE: tl/goring, tl/ucp, tl/nccl"
  : >"$OUT/perf.txt"
  for c in ${PERF_COLLS:-allgather allreduce}; do
    for cfg in ${PERF_CFGS:-goring ucp ucp_striped nccl}; do
      tls=self,tcp,cuda_copy
      case $cfg in
        goring) x=(-x UCC_TLS=ucp,goring -x "UCC_TL_GORING_TUNE=$c:cuda:inf") ;;
        goring_staged) # UCX moves host memory only: goring stages device buffers itself
          tls=self,tcp; x=(-x UCC_TLS=ucp,goring -x "UCC_TL_GORING_TUNE=$c:cuda:inf") ;;
        goring_pull) x=(-x UCC_TLS=ucp,goring -x "UCC_TL_GORING_TUNE=$c:cuda:inf" -x UCX_RNDV_SCHEME=get_zcopy) ;;
        ucp) x=(-x UCC_TLS=ucp) ;;
        ucp_striped) x=(-x UCC_TLS=ucp -x "UCX_MAX_EAGER_LANES=$RAILS") ;;
        nccl) x=(-x UCC_TLS=ucp,nccl -x UCC_TL_NCCL_TUNE=inf -x NCCL_IB_DISABLE=1) ;;
      esac
      b=$(railsum)
      run "perf_${c}_$cfg" timeout -k 5 "${PERF_TIMEOUT:-120}" env LD_LIBRARY_PATH="$NLIBS" \
        mpirun --allow-run-as-root --oversubscribe -np "$NP" --mca pml ob1 --mca btl self,vader \
        -x LD_LIBRARY_PATH -x "UCX_TLS=$tls" -x UCX_MEMTYPE_CACHE=n -x NCCL_NVLS_ENABLE=0 \
        -x PREFIX -x PPN -x RAILS -x RELAY "${x[@]}" \
        "$ROOT/tests/netns/in_node.sh" "$NW/bin/ucc_perftest" -c "$c" -m cuda -d float32 \
        -b "${PERF_MIN:-262144}" -e "${PERF_MAX:-16777216}" -n "${PERF_ITERS:-5}" -w 1 -F
      a=$(railsum)
      {
        echo "== $c $cfg: $((a - b)) bytes on the rails; all runs so far: $(rails)"
        grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$LOGS/perf_${c}_$cfg.log"
      } | tee -a "$OUT/perf.txt"
    done
  done
}

mpi_omb() {
  [ -n "${ob:-}" ] || return 0
  if wait "$ob" && [ -x "$OW/omb-src/c/mpi/collective/blocking/osu_allgather" ]; then
    echo "ok   build_ompi_omb ($((SECONDS - t0)) s)" | tee -a "$OUT/summary.txt"
  else
    echo "FAIL build_ompi_omb" | tee -a "$OUT/summary.txt"; tail -15 "$LOGS/build_osu.log"; fail=1; return 0
  fi
  step "OMB -d cuda across $NODES nodes x $PPN GPUs: Open MPI + UCX, coll/ucc with tl/ucp, with tl/goring"
  OB=$OW/omb-src/c/mpi/collective/blocking
  : >"$OUT/omb.txt"
  for c in ${OMB_COLLS:-allgather allreduce}; do
    for cfg in ${OMB_CFGS:-ompi ucc_ucp ucc_goring}; do
      case $cfg in
        ompi) x=(--mca coll_ucc_enable 0) ;;
        ucc_ucp) x=(--mca coll_ucc_enable 1 --mca coll_ucc_priority 100 -x UCC_TLS=ucp) ;;
        ucc_goring) x=(--mca coll_ucc_enable 1 --mca coll_ucc_priority 100 -x UCC_TLS=ucp,goring
          -x "UCC_TL_GORING_TUNE=$c:cuda:inf" -x GORING_TEAM_PLACEMENT=1) ;;
      esac
      before=$(railsum)
      run "omb_${c}_$cfg" timeout -k 5 "$MT" env LD_LIBRARY_PATH="$OW/ucc/lib:$UCX/lib:$OW/ompi/lib" \
        "$OW/ompi/bin/mpirun" --allow-run-as-root --oversubscribe -np "$NP" --mca btl ^openib,uct \
        --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
        -x LD_LIBRARY_PATH -x UCX_TLS=self,tcp,cuda_copy -x UCX_MEMTYPE_CACHE=n -x NCCL_NVLS_ENABLE=0 \
        -x PREFIX -x PPN -x RAILS -x RELAY "${x[@]}" \
        "$ROOT/tests/netns/in_node.sh" "$OB/osu_$c" -d cuda -m "${OMB_SIZES:-1048576:67108864}" \
        -i "${OMB_ITERS:-5}" -x 1
      after=$(railsum)
      {
        echo "== $c $cfg: $NODES nodes x $PPN GPUs, $RAILS rails at $RATE; $((after - before)) bytes on the rails"
        grep -E '^[0-9]+ ' "$LOGS/omb_${c}_$cfg.log"
      } | tee -a "$OUT/omb.txt"
    done
  done
}

