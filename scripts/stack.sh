#!/usr/bin/env bash
# stack.sh: builds the real stack goring plugs into, from the pinned release
# sources in shared/vendor, into a cache folder outside the repository:
#
#   ucx/   the Python registry's UCX wheel (libucx-cu13), UCX_PREFIX=ucx/libucx
#   ucc/   UCC installed; src/ucc is its configured and built tree (UCC_SRC,
#          whose internal headers `make tl` compiles cshim/ against)
#   ompi/  Open MPI installed, with coll/ucc and pml/ucx
#   omb/   the OSU collective benchmarks goring's tests run
#   src/   unpacked sources and build trees; logs/ one log per phase
#   stack.env  UCC_SRC UCC_PREFIX UCX_PREFIX OMPI_PREFIX OMB_DIR (sourceable)
#
#   scripts/stack.sh [VENDOR_DIR]     # or GORING_VENDOR=...; make stack
#
# VENDOR_DIR defaults to ../shared/vendor beside the repository. The folder
# is ${GORING_STACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/goring}/stack-HASH,
# HASH covering everything that decides the result (the archives' sha256,
# this script's sha256, the wheel's version, every configure flag), so an
# edit here builds a new stack beside the old one. A finished stack has a
# stamp (.complete): a second run only prints where it is.
#
# Output: progress (one line per phase, with seconds) on stderr; on stdout
# exactly one line, the path of stack.env, when the stack is ready, and
# nothing otherwise. Exit status:
#   0  ready (stdout: stack.env), or skipped because a source archive is
#      absent (stdout empty, stderr: "stack: skipped: ...")
#   1  failed: wrong checksum, missing tool, or a build error (the tail of
#      the phase's log is printed, the log stays in the cache)
#   2  usage
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SELF="$ROOT/scripts/stack.sh"
[ $# -le 1 ] || { echo "usage: scripts/stack.sh [VENDOR_DIR]" >&2; exit 2; }
VENDOR=${1:-${GORING_VENDOR:-$ROOT/../shared/vendor}}
JOBS=${GORING_STACK_JOBS:-2}
log() { echo "stack: $*" >&2; }

# The pinned archives (shared/vendor/README.md gives their origin).
declare -A SHA=(
  [ucc-1.8.0.tar.gz]=161f02a63b3ebb331bd18cf8801a7f4714185d0532ab1fe2917f55e70ef77953
  [ompi-4.1.8.tar.gz]=300b4043664fc4e5a8ad5c3f1cf5dd483eeb7c1cb990a12fd3910187e3d66ad0
  [osu-micro-benchmarks-7.4.tar.gz]=c14a3e3f5f95b9ccf8c745fcdef161e029b472c28762306f9471a4b7d4dc5242
)
UCX_WHEEL=libucx-cu13==1.22.0

missing=()
for f in "${!SHA[@]}"; do [ -f "$VENDOR/$f" ] || missing+=("$f"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "skipped: ${missing[*]} not in $VENDOR (set GORING_VENDOR or pass the folder)"
  exit 0
fi
for f in "${!SHA[@]}"; do
  got=$(sha256sum "$VENDOR/$f" | cut -d' ' -f1)
  [ "$got" = "${SHA[$f]}" ] || { log "FAILED: $VENDOR/$f has sha256 $got, want ${SHA[$f]}"; exit 1; }
done

# Open MPI: no OpenSHMEM (autogen.pl --no-oshmem, so configure has no
# --disable-oshmem); Debian's PMIx, libevent and hwloc rather than the
# bundled copies (fewer files to compile), as Debian's own Open MPI does.
PMIX_DIR=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/pmix2
# Flags: the wheel's UCX is found through an RPATH in everything linked to
# it, or Debian's libucx0 1.13 would be loaded instead. OMPI_NO_BUILD drops
# components the tests never load (MPI-IO, monitoring, RMA over pt2pt/rdma,
# GPU and verbs transports); pml/ucx, coll/ucc, coll/tuned, btl/vader stay.
UCC_FLAGS=(--disable-static --with-cuda=no --with-rocm=no --with-nccl=no --with-sharp=no --with-mpi)
OMPI_NO_BUILD=btl-openib,btl-usnic,btl-uct,btl-smcuda,rcache-gpusm,rcache-rgpusm,coll-adapt,coll-han,coll-monitoring,pml-monitoring,osc-monitoring,common-monitoring,osc-rdma,osc-pt2pt,topo-treematch,io-ompio,common-ompio,fs,fbtl,fcoll,sharedfp,vprotocol,op-avx
OMPI_FLAGS=(--disable-mpi-fortran --disable-io-romio --disable-mpi-cxx --without-verbs
  --without-cuda --with-libevent=external --with-hwloc=external --with-pmix="$PMIX_DIR"
  --enable-mca-no-build="$OMPI_NO_BUILD")
OMB_PROGS=(osu_allgather osu_allreduce osu_bcast osu_alltoallv)

KEY=$( {
  for f in $(printf '%s\n' "${!SHA[@]}" | sort); do echo "$f ${SHA[$f]}"; done
  sha256sum "$SELF" | cut -d' ' -f1
  echo "$UCX_WHEEL" "${UCC_FLAGS[*]}" "${OMPI_FLAGS[*]}" "${OMB_PROGS[*]}"
} | sha256sum | cut -c1-12)
DIR=${GORING_STACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/goring}/stack-$KEY
ENV_FILE=$DIR/stack.env
if [ -f "$DIR/.complete" ]; then
  log "ready (cached): $DIR"
  echo "$ENV_FILE"
  exit 0
fi
mkdir -p "$DIR/logs" "$DIR/src"
# One build per folder at a time; a second caller waits, then finds the stamp.
exec 9>"$DIR/.lock"
flock 9
if [ -f "$DIR/.complete" ]; then log "ready (built meanwhile): $DIR"; echo "$ENV_FILE"; exit 0; fi

UCX=$DIR/ucx/libucx
UCC=$DIR/ucc
OMPI=$DIR/ompi
OMB=$DIR/omb
SRC=$DIR/src
T0=$SECONDS

# phase NAME CMD...: runs CMD with its output in logs/NAME.log, once: a
# phase that finished (stamp .done-NAME) is not run again after a failure
# later on.
phase() {
  local name=$1 t=$SECONDS; shift
  if [ -f "$DIR/.done-$name" ]; then log "$name: done before"; return; fi
  log "$name ..."
  # In a subshell of its own with -e in force (bash ignores -e in a
  # function called as an if condition).
  local rc=0
  set +e
  (set -e; "$@") >"$DIR/logs/$name.log" 2>&1
  rc=$?
  set -e
  if [ $rc != 0 ]; then
    log "FAILED: $name after $((SECONDS - t)) s; last lines of $DIR/logs/$name.log:"
    tail -n 30 "$DIR/logs/$name.log" >&2
    exit 1
  fi
  touch "$DIR/.done-$name"
  log "$name: $((SECONDS - t)) s"
}

# unpack NAME ARCHIVE: a fresh copy of the sources in src/NAME.
unpack() {
  rm -rf "${SRC:?}/$1"
  mkdir -p "$SRC/$1"
  tar xzf "$VENDOR/$2" -C "$SRC/$1" --strip-components=1
}

# Build tools (the archives are git snapshots: autotools and flex needed)
# and the Debian libraries Open MPI uses; installed only when missing.
tools() {
  local pkgs=(autoconf automake libtool flex g++ make libevent-dev libhwloc-dev libpmix-dev) miss=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || miss+=("$p")
  done
  [ ${#miss[@]} -eq 0 ] && return 0
  echo "installing ${miss[*]}"
  local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${miss[@]}"
}

ucx() {
  rm -rf "$DIR/ucx"
  python3 -m pip install --target "$DIR/ucx" --no-deps "$UCX_WHEEL"
  # Its libtool archives name the wheel's build machine; libtool would
  # follow them to folders that do not exist here.
  find "$DIR/ucx" -name '*.la' -print -delete
  "$UCX/bin/ucx_info" -v
}

# UCC's library and components first; its MPI clients (ucc_test_mpi,
# ucc_perftest) only once Open MPI is there (ucc_mpi), with Open MPI's
# wrappers, so that they run under that Open MPI's mpirun.
ucc() {
  unpack ucc ucc-1.8.0.tar.gz
  cd "$SRC/ucc"
  ./autogen.sh
  ./configure --prefix="$UCC" --with-ucx="$UCX" "${UCC_FLAGS[@]}" \
    MPICC="$OMPI/bin/mpicc" MPICXX="$OMPI/bin/mpicxx" MPIRUN="$OMPI/bin/mpirun" \
    LDFLAGS="-Wl,-rpath,$UCX/lib"
  make -j"$JOBS" -C src
  make -C src install
  make -C tools/info install
}

ompi() {
  unpack ompi ompi-4.1.8.tar.gz
  cd "$SRC/ompi"
  ./autogen.pl --no-oshmem
  ./configure --prefix="$OMPI" --with-ucx="$UCX" --with-ucc="$UCC" "${OMPI_FLAGS[@]}" \
    LDFLAGS="-Wl,-rpath,$UCX/lib -Wl,-rpath,$UCC/lib"
  make -j"$JOBS"
  make install
}

ucc_mpi() {
  cd "$SRC/ucc"
  make -j"$JOBS" install
}

omb() {
  unpack omb osu-micro-benchmarks-7.4.tar.gz
  cd "$SRC/omb"
  ./configure --prefix="$OMB" CC="$OMPI/bin/mpicc" CXX="$OMPI/bin/mpicxx"
  make -j"$JOBS" -C c/mpi/collective/blocking "${OMB_PROGS[@]}"
  local to=$OMB/libexec/osu-micro-benchmarks/mpi/collective
  mkdir -p "$to"
  for p in "${OMB_PROGS[@]}"; do install -m 755 "c/mpi/collective/blocking/$p" "$to/"; done
}

# check: every piece loads the wheel's UCX and this UCC, not Debian's.
# resolves LIB NEEDED PREFIX: ldd shows LIB's NEEDED library under PREFIX.
resolves() {
  local got
  got=$(ldd "$1" | awk -v n="$2" '$1 == n {print $3}')
  case $got in
    "$3"/*) echo "ok: $1: $2 => $got" ;;
    *) echo "WRONG: $1: $2 => ${got:-not found}, want it under $3"; return 1 ;;
  esac
}
check() {
  resolves "$UCC/lib/libucc.so.1" libucs.so.0 "$UCX/lib"
  resolves "$UCC/lib/ucc/libucc_tl_ucp.so" libucp.so.0 "$UCX/lib"
  resolves "$OMPI/lib/openmpi/mca_coll_ucc.so" libucc.so.1 "$UCC/lib"
  resolves "$OMPI/lib/openmpi/mca_coll_ucc.so" libucs.so.0 "$UCX/lib"
  resolves "$OMPI/lib/openmpi/mca_pml_ucx.so" libucp.so.0 "$UCX/lib"
  resolves "$UCC/bin/ucc_test_mpi" libmpi.so.40 "$OMPI/lib"
  resolves "$OMB/libexec/osu-micro-benchmarks/mpi/collective/osu_allreduce" libmpi.so.40 "$OMPI/lib"
  "$OMPI/bin/ompi_info" | grep -E "MCA (coll: ucc|pml: ucx)"
  [ "$("$OMPI/bin/ompi_info" | grep -cE "MCA (coll: ucc|pml: ucx)")" = 2 ]
  "$UCC/bin/ucc_info" -v
}

phase tools tools
phase ucx ucx
phase ucc ucc
phase ompi ompi
phase ucc_mpi ucc_mpi
phase omb omb
phase check check
cat >"$ENV_FILE" <<EOF
# The real stack, built by goring's scripts/stack.sh ($KEY); source it.
export UCC_SRC=$SRC/ucc
export UCC_PREFIX=$UCC
export UCX_PREFIX=$UCX
export OMPI_PREFIX=$OMPI
export OMB_DIR=$OMB
EOF
touch "$DIR/.complete"
log "ready in $((SECONDS - T0)) s: $DIR (source $ENV_FILE)"
# Stacks of other inputs (an edited script, another checkout) are kept: one
# may still be in use. Say where they are, once, when a new one is built.
others=$(find "$(dirname "$DIR")" -maxdepth 1 -name 'stack-*' -type d ! -path "$DIR" | sort)
[ -z "$others" ] || log "note: other stacks (about 600 MB each; remove any no checkout uses):" $others
echo "$ENV_FILE"
