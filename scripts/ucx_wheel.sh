#!/usr/bin/env bash
# ucx_wheel.sh: installs the Python registry's CUDA-enabled UCX
# (libucx-cu13 1.22.0: cuda_copy and cuda_ipc; its CUDA module needs only
# the driver's libcuda.so.1 and libnvidia-ml.so.1) into .deps/ucx-cu13,
# where goring's binaries in bin/ find it (package ucx, WheelDir). Done
# once; later runs return at once. Without pip or the registry it says so
# in one line and succeeds: GPU buffers then need another CUDA-enabled UCX
# (GORING_LIBUCP), host memory works with the system's UCX.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.22.0
DIR=.deps/ucx-cu13
if [ -f "$DIR/.installed-$VERSION" ]; then
  exit 0
fi
rm -rf "$DIR"
if ! python3 -m pip install -q --target "$DIR" --no-deps "libucx-cu13==$VERSION" >/tmp/goring-ucx-wheel.log 2>&1; then
  echo "goring: note: the CUDA-enabled UCX (libucx-cu13 $VERSION) could not be installed (see /tmp/goring-ucx-wheel.log); GPU buffers need GORING_LIBUCP"
  rm -rf "$DIR"
  exit 0
fi
# The wheel's libtool archives name its build machine's folders; nothing
# here links with libtool against it, and a stray .la would mislead.
find "$DIR" -name '*.la' -delete
touch "$DIR/.installed-$VERSION"
echo "goring: CUDA-enabled UCX $VERSION in $DIR ($(du -sh "$DIR" | cut -f1))"
