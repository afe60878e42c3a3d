/*
 * kernels.h: cexec's reduction kernels under this package's name (see
 * kernels.c).
 */
#ifndef GORING_CROSSREAD_KERNELS_H
#define GORING_CROSSREAD_KERNELS_H

#define gx_reduce_kernel gx_cross_reduce_kernel
#include "../cexec/reduce.h"

#endif /* GORING_CROSSREAD_KERNELS_H */
