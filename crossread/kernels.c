/*
 * kernels.c: the reduction kernels of the cross-memory reductions.
 *
 * They are cexec's (cexec/reduce.c, bit for bit what exec/reduce
 * computes), compiled here a second time: cgo links a package's C only
 * with the C files of its own folder, and this package must not import
 * cexec, which needs UCX. The rename keeps the two copies' one global
 * symbol apart in a binary that links both packages; kernels.h gives
 * crossread.c the same name. scripts/cgo_flags.sh hashes reduce.c with
 * the headers, so a change to it rebuilds this package.
 */
#include "kernels.h"
#include "../cexec/reduce.c"
