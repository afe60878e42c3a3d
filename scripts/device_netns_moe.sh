# shellcheck shell=bash disable=SC2154,SC2034 # sourced: ROOT, B, OUT, LOGS, NODES, RAILS, RATE, PREFIX, TB, GPUS, run, step, gbench, fail (set here too)
# device_netns_moe.sh: the MoE half of device_netns.sh's testbed runs,
# sourced by it for its mode "moe" once the testbed is up. It defines
# moe_run: goring's dispatch and combine on GPU buffers across the
# namespaced nodes beside NCCL's all_to_all_single with unicast's counts
# (scripts/moe_nccl.py, one rank per command in its node's namespace,
# NCCL_HOSTID per node, or per rank where a node's ranks share a GPU:
# MOE_NCCL_HOSTID; on the same rails), and the bytes every run put on
# the rails beside what goring's plan predicts (goring plan ... "bytes
# cross nodes").
#
# For each shape NODES x PPN in MOE_PPN ("1 2"; PPN rails each) and each
# routing in MOE_ROUTINGS ("relay hot"):
#   relay: MultiWrite's prefill setting, MOE_TOKENS (2048) tokens a rank
#          of 7168 bytes, top-8 of 64 experts, no hot expert: a token
#          reaches most ranks, and the relay sends it across once a node;
#   hot:   NIMBLE's skewed setting, 8192-byte tokens, top-2 of 8 experts,
#          expert 0 in 70% of the tokens: one rank receives most rows;
# block placement;
#   1. every algorithm validated on odd and full token counts (7 and
#      MOE_TOKENS, dispatch in bytes, combine in bfloat16);
#   2. each algorithm timed alone (MOE_ITERS after one warm-up), the rails'
#      bytes read before and after: bytes a call = the difference over the
#      calls;
#   3. NCCL with the same routing, timed and its rail bytes read alike;
#   4. the table (moe_nccl.py table) and the bytes table.
# A shape with more ranks than GPUs shares the GPUs (rank r on GPU
# r % GPUS, goring and NCCL alike): with PPN <= GPUS each GPU holds ranks
# of different nodes only; with PPN > GPUS (2 x 4 on one GPU) a node's
# ranks share GPUs too, which goring allows and NCCL does not under one
# host ID (MOE_NCCL_HOSTID below).
#
# MOE_NCCL_HOSTID: which NCCL_HOSTID each NCCL rank gets.
#   node: goring-netns-node<k>, the node's ranks one NCCL host (as on a
#         real cluster: NCCL's P2P/SHM transports inside it, sockets on the
#         rails between nodes). NCCL (2.28: init.cc's "Duplicate GPU
#         detected") refuses two ranks whose host hash and PCI bus ID are
#         both equal; the host hash is a hash of NCCL_HOSTID where it is
#         set (else of the host name and the boot ID), so two ranks of a
#         node on one GPU are refused: the shape's NCCL row is skipped.
#   rank: goring-netns-node<k>-rank<j>, every rank its own NCCL host. The
#         check passes (the hashes differ), and what changes for NCCL is:
#         it sees one rank a host (no node-local ranks, so no P2P, SHM or
#         PXN, all of which need equal host hashes); every pair, those of
#         one node too, goes through the NET transport, i.e. its socket
#         plugin on the NCCL_SOCKET_IFNAME interfaces (railN). A rank's
#         peer on its own node listens on one of the node's own rail
#         addresses (198.18.r.(k+1)): the kernel routes a packet to a local
#         address through lo (the local routing table), not out of the
#         rail's veth, so that traffic crosses no tbf and no rail counter
#         (a TCP stream between two rail addresses of one namespace:
#         0 rail bytes, 3.3 GiB/s on a 2-core VM, against 0.125 GB/s a
#         rail). Inside a node NCCL thus moves bytes by TCP over loopback
#         (host staging, not NVLink: slower than goring's push engine, but
#         far faster than the rails that set the pace), and between nodes
#         over the same sockets on the same rails as with node (all_to_all
#         is send/recv: the ring/tree choice that nNodes feeds is not
#         used). Only the rails' bytes are counted, which must equal
#         unicast's (the bytes table's "nccl" row checks it).
#         Keep NCCL_SOCKET_IFNAME on the rails: lo there would advertise
#         127.0.0.1, which the other node cannot reach.
#   auto (default): rank where the shape puts a node's ranks on shared
#         GPUs (PPN > GPUS), else node.
# (NCCL 2.30 and later accept ranks of one host on one GPU with
# NCCL_MULTI_RANK_GPU_ENABLE=1; PyTorch's NCCL 2.28 does not have it.)
#
# MOE_NCCL_RAILS: the interfaces each NCCL rank may use, one NCCL run for
# each word (default "all own": both, in one call, the table beside each).
#   all: every rail of its node (NCCL_SOCKET_IFNAME=rail0,...):
#         NCCL spreads each rank's sockets over all of them, which no GPU
#         of a rail-optimized cluster does (each has its own NIC);
#   own:  rank r's own rail alone (rail<r mod PPN>), as goring's ranks
#         send. Each rank then listens on its own rail's address, and the
#         kernel routes by destination: every byte to a rank crosses that
#         rank's rail, as NCCL's PXN sends a remote GPU's traffic on the
#         destination's rail (NIMBLE's baseline).

MOE_PPN=${MOE_PPN:-1 2}
MOE_ROUTINGS=${MOE_ROUTINGS:-relay hot}
MOE_TOKENS=${MOE_TOKENS:-2048}
MOE_ITERS=${MOE_ITERS:-5}
MOE_ALGS=${MOE_ALGS:-unicast multiwrite nimble}
MOE_TIMEOUT=${MOE_TIMEOUT:-300} # seconds an NCCL rank may take
MOE_NCCL_HOSTID=${MOE_NCCL_HOSTID:-auto} # node, rank or auto (above)
MOE_NCCL_RAILS=${MOE_NCCL_RAILS:-all own} # all, own or both (above)

# moe_nccl_hostid PPN R: the NCCL_HOSTID of rank R in a shape of PPN ranks
# a node (MOE_NCCL_HOSTID, GPUS); fails on an unknown mode.
moe_nccl_hostid() {
  local ppn=$1 r=$2 mode=$MOE_NCCL_HOSTID
  [ "$mode" = auto ] && { mode=node; [ "$ppn" -gt "$GPUS" ] && mode=rank; }
  case $mode in
    node) echo "goring-netns-node$((r / ppn))" ;;
    rank) echo "goring-netns-node$((r / ppn))-rank$((r % ppn))" ;;
    *) echo "device_netns_moe: MOE_NCCL_HOSTID=$MOE_NCCL_HOSTID: want node, rank or auto" >&2; return 1 ;;
  esac
}

# moe_bytes DIFF CALLS: bytes a call, from tc's counters' difference.
moe_bytes() { awk -v d="$1" -v n="$2" 'BEGIN { printf "%.0f", d / n }'; }

# moe_rails BEFORE AFTER CALLS: bytes a call each node sent on each rail,
# from two `testbed.sh sent` listings, on one line (nodeK/railR=BYTES);
# the busiest, at RATE, is the floor of a call's time.
moe_rails() {
  awk -v n="$3" 'NR == FNR { a[$1] = $2; next } { printf "%s%s=%.0f", sep, $1, ($2 - a[$1]) / n; sep = " " } END { print "" }' "$1" "$2"
}

# moe_nccl PPN NP TAG ROUTING MODE FILE: NCCL's all_to_all_single with the
# routing's unicast counts, NP ranks (one command each in its node's
# namespace), sockets on the rails MODE gives (MOE_NCCL_RAILS: all or
# own); rank 0 writes the rows to FILE, and the rails' bytes go to the
# bytes table as nccl-MODE. Fails (and says so) when a rank fails.
moe_nccl() {
  local ppn=$1 np=$2 tag=$3 routing=$4 mode=$5 nj=$6 ifs rif pids=() nfail=0 r k o p a b
  local bt=$OUT/moe_bytes.txt
  case $mode in
    all | own) ;;
    *) echo "FAIL moe_nccl_$tag: MOE_NCCL_RAILS has $mode (all or own)" | tee -a "$OUT/summary.txt"; fail=1; return 1 ;;
  esac
  rm -f "$nj"
  ifs=$(seq -s, -f 'rail%g' 0 $((ppn - 1)))
  echo "NCCL ($mode): NCCL_HOSTID $(moe_nccl_hostid "$ppn" 0), $(moe_nccl_hostid "$ppn" 1), ... (MOE_NCCL_HOSTID=$MOE_NCCL_HOSTID), sockets on $( [ "$mode" = own ] && echo "each rank's own rail" || echo "$ifs")"
  a=$("$TB" sent total); "$TB" sent >"$LOGS/moe_rails_before"
  for ((r = np - 1; r >= 0; r--)); do
    k=$((r / ppn))
    o=(); [ $r = 0 ] && o=(--out "$nj")
    rif=$ifs
    [ "$mode" = own ] && rif=rail$((r % ppn))
    ip netns exec "$PREFIX-node$k" env NCCL_HOSTID="$(moe_nccl_hostid "$ppn" "$r")" NCCL_SOCKET_IFNAME="$rif" NCCL_IB_DISABLE=1 \
      NCCL_NVLS_ENABLE=0 NCCL_DEBUG="${NCCL_DEBUG:-WARN}" \
      timeout "$MOE_TIMEOUT" python3 "$ROOT/scripts/moe_nccl.py" run --routing "$routing" --rank "$r" --addr 198.18.0.1 \
      --port 29541 --iters "$MOE_ITERS" --warmup 1 "${o[@]}" >"$LOGS/moe_nccl_${tag}_${mode}_rank$r.err" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || nfail=1; done
  b=$("$TB" sent total); "$TB" sent >"$LOGS/moe_rails_after"
  if [ $nfail != 0 ] || [ ! -s "$nj" ]; then
    echo "FAIL moe_nccl_${tag}_$mode (baseline only)" | tee -a "$OUT/summary.txt"
    tail -6 "$LOGS/moe_nccl_${tag}_${mode}_rank0.err" | tee -a "$OUT/summary.txt"; rm -f "$nj"
    return 1
  fi
  echo "ok   moe_nccl_${tag}_$mode" | tee -a "$OUT/summary.txt"
  # Each collective: one checked call, the warm-up, the timed ones.
  printf '%-8s %-5s %-8s %-10s measured %12s\n' "both" "$tag" "nccl-$mode" nccl \
    "$(moe_bytes "$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')" $((2 * (MOE_ITERS + 2))))" | tee -a "$bt"
  # Dispatch's and combine's calls together: node 1's rails carry
  # mostly dispatch's (to the hot rank), node 0's combine's.
  echo "  rails: $(moe_rails "$LOGS/moe_rails_before" "$LOGS/moe_rails_after" $((2 * (MOE_ITERS + 2))))" | tee -a "$bt"
}

moe_run() {
  local ppn np v rflags c dt alg a b tag k tb
  local bt=$OUT/moe_bytes.txt
  : >"$bt"
  for ppn in $MOE_PPN; do
    np=$((NODES * ppn))
    [ "$ppn" -le "$RAILS" ] || { echo "skipped: $NODES x $ppn needs $ppn rails ($RAILS)"; continue; }
    # The routing depends on the ranks only (and the seed), not on the
    # topology's links: the testbed's own, for plan's predictions.
    tb=$OUT/moe_topo_${NODES}x$ppn.json
    "$B/goring" topo testbed --nodes "$NODES" --ppn "$ppn" --rails "$ppn" --rate "$RATE" --gpu --json >"$tb" || {
      echo "FAIL moe topology ${NODES}x$ppn" | tee -a "$OUT/summary.txt"; fail=1; continue; }
    for v in $MOE_ROUTINGS; do
      case $v in
        relay) rflags=(--hidden-bytes 7168 --topk 8 --experts 64) ;;
        hot) rflags=(--hidden-bytes 8192 --topk 2 --experts 8 --hot 0:0.7) ;;
        *) echo "FAIL moe: unknown routing $v (relay, hot)" | tee -a "$OUT/summary.txt"; fail=1; continue ;;
      esac
      tag="${NODES}x${ppn}_$v"
      step "MoE on $NODES nodes x $ppn ranks ($np ranks, $ppn rail(s) at $RATE), routing $v: $MOE_TOKENS tokens a rank, ${rflags[*]}"
      local gj=()
      for c in dispatch combine; do
        dt=(); [ $c = combine ] && dt=(--dtype bfloat16)
        run "moe_validate_${c}_$tag" gbench "$c" --nodes "$NODES" --ppn "$ppn" --rails "$ppn" --alg all \
          --tokens "7,$MOE_TOKENS" "${rflags[@]}" "${dt[@]}" --iters 1 --warmup 1 --validate --json
        for alg in $MOE_ALGS; do
          a=$("$TB" sent total); "$TB" sent >"$LOGS/moe_rails_before"
          if gbench "$c" --nodes "$NODES" --ppn "$ppn" --rails "$ppn" --alg "$alg" --tokens "$MOE_TOKENS" \
            "${rflags[@]}" "${dt[@]}" --iters "$MOE_ITERS" --warmup 1 --json \
            >"$OUT/moe_goring_${c}_${alg}_$tag.json" 2>"$LOGS/moe_goring_${c}_${alg}_$tag.err"; then
            b=$("$TB" sent total); "$TB" sent >"$LOGS/moe_rails_after"
            gj+=("$OUT/moe_goring_${c}_${alg}_$tag.json")
            printf '%-8s %-5s %-8s %-10s measured %12s predicted %12s\n' "$c" "$tag" "$alg" goring \
              "$(moe_bytes "$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')" $((MOE_ITERS + 1)))" \
              "$("$B/goring" plan "$c" --alg "$alg" --topo "$tb" --tokens "$MOE_TOKENS" "${rflags[@]}" "${dt[@]}" |
                sed -n 's/.*; \([0-9]*\) bytes cross nodes.*/\1/p')" | tee -a "$bt"
            echo "  rails: $(moe_rails "$LOGS/moe_rails_before" "$LOGS/moe_rails_after" $((MOE_ITERS + 1)))" | tee -a "$bt"
          else
            echo "FAIL moe_time_${c}_${alg}_$tag" | tee -a "$OUT/summary.txt"
            tail -6 "$LOGS/moe_goring_${c}_${alg}_$tag.err" | tee -a "$OUT/summary.txt"; fail=1
          fi
        done
      done
      # NCCL, the same routing (goring's bench draws it from the same
      # flags and seed), both collectives in one job.
      local routing=$OUT/moe_routing_$tag.json
      "$B/goring" plan dispatch --alg unicast --topo "$tb" --tokens "$MOE_TOKENS" "${rflags[@]}" \
        --routing-out "$routing" >/dev/null 2>"$LOGS/moe_routing_$tag.err" ||
        { echo "FAIL moe routing $tag" | tee -a "$OUT/summary.txt"; fail=1; continue; }
      local h0 h1 mode nj njs=()
      if ! h0=$(moe_nccl_hostid "$ppn" 0) || ! h1=$(moe_nccl_hostid "$ppn" 1); then
        echo "FAIL moe_nccl_$tag: MOE_NCCL_HOSTID=$MOE_NCCL_HOSTID (node, rank or auto)" | tee -a "$OUT/summary.txt"; fail=1
      elif [ "$ppn" -gt "$GPUS" ] && [ "$h0" = "$h1" ]; then
        echo "skipped NCCL: a node's $ppn ranks share $GPUS GPU(s) under one NCCL_HOSTID (MOE_NCCL_HOSTID=rank or auto)"
      else
        for mode in $MOE_NCCL_RAILS; do
          nj=$OUT/moe_nccl_${tag}_$mode.json
          moe_nccl "$ppn" "$np" "$tag" "$routing" "$mode" "$nj" && njs+=("$mode=$nj")
        done
      fi
      if [ ${#gj[@]} -gt 0 ]; then
        python3 "$ROOT/scripts/moe_nccl.py" table --goring "${gj[@]}" --nccl "${njs[@]}" | tee "$OUT/moe_table_$tag.txt"
      fi
    done
  done
  step "MoE: bytes a call on the rails (tc's counters), and what goring's plan predicts"
  cat "$bt"
  # One archive of the rows and tables (the device tool returns few files).
  (cd "$OUT" && tar czf moe.tgz moe_*.json moe_*.txt && rm -f moe_*.json)
}
