#!/usr/bin/env bash
# Compare goring bench with Open MPI's own MPI_Allgather / MPI_Allreduce on
# this machine, in one run: 4 processes on host memory, sizes 1-16 MiB
# (override with SIZES=a:b, NP, NODES, ITERS, WARMUP). goring runs every
# algorithm once per entry of NODES (default "1 2": the 4 ranks as one flat
# node, and as 2 emulated nodes of 2, so that the hierarchical algorithms
# see nodes and rails). Prints the tables and, per size, the ratio of
# goring's best algorithm (labelled alg/nodes=K) to Open MPI (bandwidth
# ratio = Open MPI latency / goring latency; >= 1 means goring is faster),
# overall and per NODES entry. ROUNDS=R repeats everything R times,
# interleaved, and reports the median ratio and its range: on a shared
# machine one round is at the mercy of whatever else runs.
#
#   tests/osu/compare.sh                 # from the repository root
#   GORING=bin/goring tests/osu/compare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
NP=${NP:-4}
NODES=${NODES:-1 2}
SIZES=${SIZES:-1MiB:16MiB}
ITERS=${ITERS:-0}      # 0: as OMB (100 timed above 8 KiB)
WARMUP=${WARMUP:--1}  # -1: as OMB (10 above 8 KiB)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
GORING=${GORING:-}
MPIRUN=(mpirun -np "$NP" --allow-run-as-root --oversubscribe)

if [ -z "$GORING" ]; then
  GORING=$OUT/goring
  go build -o "$GORING" ./cmd/goring
fi
mpicc -O2 -o "$OUT/osu_coll" tests/osu/osu_coll.c

lo=${SIZES%%:*}; hi=${SIZES##*:}
to_bytes() { # 1MiB -> 1048576 (K/M/G, optional iB)
  local v=${1%iB}; v=${v%B}
  case $v in *K) echo $(( ${v%K} << 10 ));; *M) echo $(( ${v%M} << 20 ));; *G) echo $(( ${v%G} << 30 ));; *) echo "$v";; esac
}
lob=$(to_bytes "$lo"); hib=$(to_bytes "$hi")
mpi_iters=(); [ "$ITERS" != 0 ] && mpi_iters=("$ITERS" "$WARMUP")

ROUNDS=${ROUNDS:-1}
for round in $(seq 1 "$ROUNDS"); do
  for c in allgather allreduce; do
    echo "== round $round, $c: Open MPI ($(mpirun --version 2>/dev/null | head -1))"
    "${MPIRUN[@]}" "$OUT/osu_coll" "$c" "$lob" "$hib" "${mpi_iters[@]}" | tee "$OUT/ompi_$c.$round.txt"
    for nodes in $NODES; do
      echo "== round $round, $c: goring bench --alg all --np $NP --nodes $nodes (UCX_TLS=${UCX_TLS:-default})"
      gflags=(--alg all --np "$NP" --nodes "$nodes" --bytes "$SIZES" --csv)
      [ "$ITERS" != 0 ] && gflags+=(--iters "$ITERS")
      [ "$WARMUP" != -1 ] && gflags+=(--warmup "$WARMUP")
      "$GORING" bench "$c" "${gflags[@]}" | tee "$OUT/goring_$c.$round.n$nodes.csv"
    done
  done
done

# summary LABEL NODES...: best goring algorithm over the given --nodes runs
# against Open MPI, median over rounds.
summary() {
  local label=$1; shift
  echo
  echo "== $label: goring best / Open MPI: bus bandwidth ratio = Open MPI latency / goring's best latency"
  echo "   (median over $ROUNDS interleaved round(s), with the range; goal >= 0.90)"
  printf '%-11s %-9s %13s %15s %-28s %7s %15s\n' collective bytes ompi_avg_us goring_best_us best_alg ratio ratio_range
  for c in allgather allreduce; do
    for round in $(seq 1 "$ROUNDS"); do
      files=()
      for nodes in "$@"; do files+=("$OUT/goring_$c.$round.n$nodes.csv"); done
      awk -v c="$c" -v round="$round" '
        FNR == 1 { file++; nodes = FILENAME; sub(/.*\.n/, "", nodes); sub(/\.csv$/, "", nodes) }
        file == 1 && $1 ~ /^[0-9]+$/ { ompi[$1] = $2; next }
        file >= 2 && FNR > 1 {
          split($0, f, ","); b = f[3]; us = f[4] + 0
          if (!(b in best) || us < best[b]) { best[b] = us; alg[b] = f[2] "/nodes=" nodes }
        }
        END { for (b in ompi) if (b in best) print c, b, round, ompi[b], best[b], alg[b], ompi[b] / best[b] }' \
        "$OUT/ompi_$c.$round.txt" "${files[@]}"
    done
  done | sort -k1,1 -k2,2n -k7,7g | awk '
    function flush() {
      if (n == 0) return
      m = int((n + 1) / 2)
      printf "%-11s %-9s %13.2f %15.2f %-28s %7.2f %7.2f..%-6.2f\n", key_c, key_b, o[m], g[m], a[m], r[m], r[1], r[n]
    }
    { if ($1 != key_c || $2 != key_b) { flush(); key_c = $1; key_b = $2; n = 0 }
      n++; o[n] = $4; g[n] = $5; a[n] = $6; r[n] = $7 }
    END { flush() }'
}

for nodes in $NODES; do
  summary "--nodes $nodes only" "$nodes"
done
# shellcheck disable=SC2086
summary "best of --nodes $NODES" $NODES

echo "(raw outputs in $OUT)"
