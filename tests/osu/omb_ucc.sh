#!/usr/bin/env bash
# OSU Micro-Benchmarks through Open MPI's coll/ucc: Open MPI's own
# collectives, UCC with its tl/ucp, and UCC with goring's tl/goring, in one
# run, interleaved. Needs what this repository never builds or commits:
#   OMB_DIR      an OMB 7.x installation (libexec/osu-micro-benchmarks/...)
#   OMPI_PREFIX  an Open MPI built --with-ucc (ompi_info lists "coll: ucc")
#   UCC_PREFIX, UCX_PREFIX, UCC_SRC  the UCC (and its UCX) that Open MPI uses
# Without them it says why and exits 0.
#
#   OMB_DIR=... OMPI_PREFIX=... UCC_PREFIX=... UCX_PREFIX=... UCC_SRC=... \
#     ROUNDS=3 NP=2 tests/osu/omb_ucc.sh
#
# COLLS picks the benchmarks (default "allgather allreduce"; alltoallv and
# bcast also work); UCC_TL_GORING_ALG_ALLTOALLV passes on to goring's run;
# GORING_TUNE replaces the UCC_TL_GORING_TUNE value that hands goring every
# size of every collective (e.g. allreduce:0-inf:@recursive_doubling:inf).
#
# ITERS is the timed iterations of sizes above 8 KiB; smaller ones run
# SMALL_ITERS (default 1000), as OMB's own defaults have it.
#
# CONFIGS picks the configurations timed (default "ompi ucc_ucp
# ucc_goring"); "shipped" is Open MPI with ompi-config/ as a user turns
# goring on (goring-mca-params.conf and goring-ucc.env, goring not forced),
# e.g. CONFIGS="ompi ucc_ucp shipped".
#
# goring's results are validated first, in a run of their own (OMB's -c): a
# wrong result fails the script. The timed runs go without -c.
#
# On a machine where goring is already installed into UCC and OMB is built
# but not installed (scripts/device_osu.sh host): NO_TL_INSTALL=1 skips
# make tl-install (no Go there), OMB_BIN names the folder of the
# collective benchmarks, and MPIRUN_EXTRA adds launcher options every
# configuration gets (e.g. "--bind-to none", so crossmem=auto finds cores).
# Ratio = the other's average latency / the last configuration's (>= 1: the
# last is faster); best = the faster of Open MPI's own and tl/ucp.
set -euo pipefail
cd "$(dirname "$0")/../.."
need="OMPI_PREFIX UCC_PREFIX UCX_PREFIX"
[ -n "${OMB_BIN:-}" ] || need+=" OMB_DIR"
[ "${NO_TL_INSTALL:-0}" = 1 ] || need+=" UCC_SRC"
for v in $need; do
  if [ -z "${!v:-}" ]; then
    echo "tests/osu/omb_ucc.sh: skipped: $v is not set (see docs/ucc.md)"
    exit 0
  fi
done
NP=${NP:-2}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-1024:16777216}
ITERS=${ITERS:-100}
COLLS=${COLLS:-allgather allreduce}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
[ "${NO_TL_INSTALL:-0}" = 1 ] || make tl-install UCC_SRC="$UCC_SRC" UCC_PREFIX="$UCC_PREFIX" UCX_PREFIX="$UCX_PREFIX" >/dev/null
export LD_LIBRARY_PATH="$OMPI_PREFIX/lib:$UCC_PREFIX/lib:$UCX_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN=${OMB_BIN:-$OMB_DIR/libexec/osu-micro-benchmarks/mpi/collective}
# shellcheck disable=SC2206 # MPIRUN_EXTRA is words on purpose
MPIRUN=("$OMPI_PREFIX/bin/mpirun" -np "$NP" --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH ${MPIRUN_EXTRA:-})
TUNE=UCC_TL_GORING_TUNE=${GORING_TUNE:-allgather,allreduce,reduce_scatter,bcast,alltoall,alltoallv:inf}
ALG=${UCC_TL_GORING_ALG_ALLTOALLV:-pairwise}
CONFIGS=${CONFIGS:-ompi ucc_ucp ucc_goring}
# Every setting of the shipped environment file, as a user exports it.
SHIPPED_ENV=$(scripts/ucc_env_args.sh ompi-config/goring-ucc.env)
declare -A CFG=(
  [shipped]="--tune ompi-config/goring-mca-params.conf $SHIPPED_ENV"
  [ompi]="--mca coll_ucc_enable 0"
  [ucc_ucp]="--mca coll_ucc_enable 1 --mca coll_ucc_priority 100"
  [ucc_goring]="--mca coll_ucc_enable 1 --mca coll_ucc_priority 100 -x $TUNE -x UCC_TL_GORING_ALG_ALLTOALLV=$ALG"
)
# goring's results are validated in a run of their own (-c, a few
# iterations), never in a timed one: OMB's validation rewrites and checks
# the buffers around every timed call, which slows that call (more so the
# larger -m's buffers), and the other layers are timed without it.
set -f # the TUNE strings' [2-2] are no file patterns
for c in $COLLS; do
  for v in ucc_goring shipped; do
    [[ " $CONFIGS " == *" $v "* ]] || continue
    echo "== validation $c $v"
    # shellcheck disable=SC2086
    "${MPIRUN[@]}" ${CFG[$v]} "$BIN/osu_$c" -T mpi_float -m "$SIZES" -i 5 -x 2 -c | tee "$OUT/$c.$v.validation.log"
    if grep -q "Fail" "$OUT/$c.$v.validation.log" || ! grep -q "Pass" "$OUT/$c.$v.validation.log"; then
      echo "tests/osu/omb_ucc.sh: OMB validation failed through $v ($c)"; exit 1
    fi
  done
done
# Sizes up to SMALL_MAX (OMB's own boundary between small and large
# messages) run SMALL_ITERS iterations after 100 warm-up ones, as OMB does
# by default; larger ones ITERS after 10. With 100 iterations at every
# size, a one-time cost of a few hundred us that a UCC layer pays when
# calls first reach a new size range put tl/ucp at 2-4 us where it takes
# 0.4-1.4 (docs/ucc.md), and Open MPI's own pays no such cost.
SMALL_MAX=8192
lo=${SIZES%%:*} hi=${SIZES##*:}
timed() { # timed CFG COLL: one timed run of every size, small then large
  local cfg=$1 c=$2
  # shellcheck disable=SC2086
  if ((lo <= SMALL_MAX)); then
    "${MPIRUN[@]}" ${CFG[$cfg]} "$BIN/osu_$c" -T mpi_float -m "$lo:$((hi < SMALL_MAX ? hi : SMALL_MAX))" \
      -i "${SMALL_ITERS:-1000}" -x 100
  fi
  # shellcheck disable=SC2086
  if ((hi > SMALL_MAX)); then
    "${MPIRUN[@]}" ${CFG[$cfg]} "$BIN/osu_$c" -T mpi_float -m "$((lo > SMALL_MAX ? lo : 2 * SMALL_MAX)):$hi" \
      -i "$ITERS" -x 10
  fi
}
for round in $(seq 1 "$ROUNDS"); do
  for c in $COLLS; do
    for cfg in $CONFIGS; do
      echo "== round $round $c $cfg"
      timed "$cfg" "$c" | tee "$OUT/$c.$cfg.$round.txt"
    done
  done
done
python3 - "$OUT" "$ROUNDS" "$CONFIGS" $COLLS <<'PY'
import sys, glob, statistics, collections
out, rounds, cfgs, colls = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
lat = collections.defaultdict(list)
for f in glob.glob(out + "/*.txt"):
    c, cfg, _ = f.split("/")[-1].rsplit(".", 3)[:3]
    for line in open(f):
        p = line.split()
        if len(p) >= 2 and p[0].isdigit():
            lat[(c, cfg, int(p[0]))].append(float(p[1]))
last = cfgs[-1]
others = [c for c in cfgs[:-1]]
print("\n# median over %d rounds, us; ratio = other / %s (>= 1: %s faster)" % (rounds, last, last))
head = ["coll", "bytes"] + cfgs + ["%s/%s" % (o, last[:6]) for o in others]
best = "ompi" in cfgs and "ucc_ucp" in cfgs and last not in ("ompi", "ucc_ucp")
if best:
    head.append("best/" + last[:6])
print(" ".join("%12s" % h for h in head))
for c in colls:
    for size in sorted({k[2] for k in lat if k[0] == c}):
        m = {cfg: statistics.median(lat[(c, cfg, size)]) for cfg in cfgs if lat[(c, cfg, size)]}
        if len(m) < len(cfgs):
            continue
        g = m[last]
        row = [c, str(size)] + ["%.2f" % m[x] for x in cfgs] + ["%.2f" % (m[o] / g) for o in others]
        if best:
            row.append("%.2f" % (min(m["ompi"], m["ucc_ucp"]) / g))
        print(" ".join("%12s" % x for x in row))
print("(raw outputs in %s)" % out)
PY
