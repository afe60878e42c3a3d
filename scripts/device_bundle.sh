#!/usr/bin/env bash
# device_bundle.sh: builds what a GPU machine needs into .carry/ (ignored
# by git), for the device tool to carry: the goring binary, the GPU test
# binaries, and the runtime part of the CUDA-enabled UCX (the libraries
# and CUDA modules, without static archives and perftest modules), laid
# out as bin/ and .deps/ so that bin/goring finds its UCX beside itself.
# scripts/device_test.sh runs it there.
#
#   scripts/device_bundle.sh            # then carry [".carry"]
#   scripts/device_bundle.sh node       # .carry for device_node.sh alone: no bin/
#   scripts/device_bundle.sh netns      # .carry/netns.tar.xz alone, for device_netns.sh:
#                                       # goring, the UCX runtime and iproute2 (for an
#                                       # image without ip/tc), unpacked there into .carry/
#   scripts/device_bundle.sh osu        # and .carry-osu/ for device_osu.sh (Open MPI,
#                                       # UCC, OMB sources autogen'd here); carry
#                                       # [".carry", ".carry-osu"] (64 MiB in all: .carry
#                                       # then keeps goring and UCX only, no test binaries)
#   scripts/device_bundle.sh cluster    # .carry/cluster.tar.xz alone: osu's two folders,
#                                       # device_node.sh's UCC, iproute2 and the PMIx relay,
#                                       # for device_netns.sh's mpi mode (unpacked there)
set -euo pipefail
cd "$(dirname "$0")/.."
# The pinned release sources (scripts/stack.sh reads the same folder).
VENDOR=${GORING_VENDOR:-../shared/vendor}
make -s deps
CGO_CFLAGS=$(scripts/cgo_flags.sh)
export CGO_CFLAGS
out=.carry
# ucx_runtime DIR: the runtime part of the CUDA-enabled UCX under
# DIR/.deps/ucx-cu13/libucx, where bin/goring looks beside itself.
ucx_runtime() {
  local w=.deps/ucx-cu13/libucx d="$1/.deps/ucx-cu13/libucx" m
  [ -d "$w" ] || return 0
  mkdir -p "$d/lib/ucx" "$d/bin"
  cp -p "$w"/lib/lib{ucp,uct,ucs,ucm,ucs_signal}.so.0 "$d/lib/"
  for m in uct_cuda ucm_cuda uct_cma; do
    cp -p "$w/lib/ucx/lib$m.so.0" "$d/lib/ucx/"
    ln -sf "lib$m.so.0" "$d/lib/ucx/lib$m.so"
  done
  cp -p "$w/bin/ucx_info" "$d/bin/"
  cp -rp "$w/include" "$d/"
  cp -rp "$w/etc" "$d/" 2>/dev/null || true
}
if [ "${1:-}" = netns ]; then
  # One xz tarball: the device call carries 64 MiB with the repository.
  t=$(mktemp -d)
  trap 'rm -rf "$t"' EXIT
  mkdir -p "$t/bin"
  go build -ldflags="-s -w" -o "$t/bin/goring" ./cmd/goring
  ucx_runtime "$t"
  rm -rf "$t/.deps/ucx-cu13/libucx/include"
  scripts/carry_iproute2.sh >/dev/null
  mv "$out/iproute2" "$t/"
  rm -rf "$out" && mkdir -p "$out"
  tar cf - -C "$t" . | xz -9 -T0 >"$out/netns.tar.xz"
  du -sh "$out/netns.tar.xz"
  exit 0
fi
rm -rf "$out"
mkdir -p "$out/bin"
go build -ldflags="-s -w" -o "$out/bin/goring" ./cmd/goring
go test -ldflags="-s -w" -c -o "$out/bin/cuda.test" ./cuda
go test -ldflags="-s -w" -c -o "$out/bin/cudaexec.test" ./cudaexec
go test -ldflags="-s -w" -c -o "$out/bin/tl.test" ./team
# The team layer's Go half, for a UCC built on the GPU machine (the C half,
# cshim/, is compiled there against that UCC).
mkdir -p "$out/lib"
go build -ldflags="-s -w" -tags ucc -buildmode=c-shared -o "$out/lib/libgoring.so" ./ucc_tl_goring
rm -f "$out/lib/libgoring.h"
ucx_runtime "$out"
cp scripts/device_test.sh scripts/device_ucc.sh scripts/device_host.sh scripts/device_node.sh \
  scripts/device_beside.sh scripts/gemm_beside.py "$out/"
# UCC for the baseline, autogen'd here (the device has no autotools).
if [ -f "$VENDOR/ucc-1.8.0.tar.gz" ]; then
  t=$(mktemp -d); mkdir "$t/ucc"
  tar xzf "$VENDOR/ucc-1.8.0.tar.gz" -C "$t/ucc" --strip-components=1
  (cd "$t/ucc" && ./autogen.sh >/dev/null 2>&1)
  tar czf "$out/ucc-autogen.tar.gz" -C "$t" ucc && rm -rf "$t"
fi
# node: what device_node.sh needs alone (UCC, libgoring.so, UCX): no
# binaries, so that .carry and the working tree stay under 64 MiB.
[ "${1:-}" = node ] && rm -f "$out"/bin/*.test "$out/bin/goring"
du -sh "$out"

[ "${1:-}" = osu ] || [ "${1:-}" = cluster ] || exit 0
# .carry-osu: what device_osu.sh builds Open MPI + coll/ucc, UCC and OMB
# from, and the team layer; the UCX wheel and the goring binary stay in
# .carry, carried beside it. Open MPI's release tarball is a source tree
# without configure and without its flex outputs; the device has neither
# autotools nor flex, so both are made here (xz: the autogen'd tree packs
# to 7 MB against gzip's 29).
o=.carry-osu
rm -rf "$o" && mkdir -p "$o/lib"
cp "$out/lib/libgoring.so" "$o/lib/"
mv "$out/ucc-autogen.tar.gz" "$o/"
rm -f "$out"/bin/*.test
cp "$VENDOR/osu-micro-benchmarks-7.4.tar.gz" "$o/"
cp -r cshim scripts/device_osu.sh "$o/"
cp ucc_tl_goring/goring.h "$o/cshim/" # the C API the shim calls, from its implementer
t=$(mktemp -d); mkdir "$t/ompi"
tar xzf "$VENDOR/ompi-4.1.8.tar.gz" -C "$t/ompi" --strip-components=1
(
  cd "$t/ompi" && ./autogen.pl --no-oshmem >/dev/null 2>&1
  lex() { flex -P"$2" -o "${1%.l}.c" "$1"; }
  lex opal/util/keyval/keyval_lex.l opal_util_keyval_yy
  lex opal/util/show_help_lex.l opal_show_help_yy
  lex opal/mca/btl/openib/btl_openib_lex.l btl_openib_ini_yy
  lex opal/mca/pmix/pmix3x/pmix/src/util/keyval/keyval_lex.l pmix_util_keyval_yy
  lex opal/mca/pmix/pmix3x/pmix/src/util/show_help_lex.l pmix_show_help_yy
  lex orte/util/hostfile/hostfile_lex.l orte_util_hostfile_
  lex orte/mca/rmaps/rank_file/rmaps_rank_file_lex.l orte_rmaps_rank_file_
)
tar cf - -C "$t" ompi | xz -9 -T0 >"$o/ompi-4.1.8.tar.xz" && rm -rf "$t"
du -shc "$out" "$o"

[ "${1:-}" = cluster ] || exit 0
# cluster: both folders in one xz archive, with what device_netns.sh adds:
# UCC's sources for device_node.sh, iproute2 and the PMIx relay of
# in_node.sh. One copy each of libgoring.so and UCC's sources, the other a
# link (the call carries 64 MiB with the working tree).
ln -sf "../$o/ucc-autogen.tar.gz" "$out/ucc-autogen.tar.gz"
ln -sf "../../$out/lib/libgoring.so" "$o/lib/libgoring.so"
cp scripts/device_node.sh "$out/"
scripts/carry_iproute2.sh >/dev/null
go build -ldflags="-s -w" -o "$out/bin/pmixrelay" ./tests/netns/pmixrelay
t=$(mktemp)
tar cf - "$out" "$o" | xz -9 -T0 >"$t"
rm -rf "$out" "$o" && mkdir -p "$out" && mv "$t" "$out/cluster.tar.xz"
du -sh "$out/cluster.tar.xz"
