#!/usr/bin/env bash
# cgo_flags.sh: prints the CGO_CFLAGS goring's builds use: the caller's
# (default "-g -O2", cgo's own) plus a hash of the C files that cgo
# packages include from other folders (cexec/ and ucx/ headers, and
# cexec/reduce.c, which crossread/ compiles). Go's build
# cache keys a cgo package on its own folder's files and on CGO_CFLAGS,
# not on headers elsewhere, so without the hash a changed header left a
# stale object in the cache (libgoring.so still reported API version 2
# after goring.h, then in cshim/, said 3). The Makefile and device_bundle.sh
# use it.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=${CGO_CFLAGS:--g -O2}
flags=$(sed 's/ *-DGORING_HEADERS_SUM=[0-9a-f]*//' <<<"$flags")
sum=$(cat cexec/*.h cexec/reduce.c ucx/*.h | sha256sum | cut -c1-16)
echo "$flags -DGORING_HEADERS_SUM=$sum"
