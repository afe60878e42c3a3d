/*
 * reduce.h: the element-wise reduction kernels of package cexec,
 * dst[i] = dst[i] OP src[i], bit for bit what Go's exec/reduce computes.
 *
 * The numeric values of the dtype and op enums are package coll's Dtype
 * and Op values, so Go passes them through unchanged.
 */
#ifndef GORING_CEXEC_REDUCE_H
#define GORING_CEXEC_REDUCE_H

#include <stddef.h>

/* Element types, numbered as coll.Dtype (0 is invalid). */
enum gx_dtype {
	GX_DTYPE_INVALID = 0,
	GX_INT8 = 1,
	GX_INT16 = 2,
	GX_INT32 = 3,
	GX_INT64 = 4,
	GX_UINT8 = 5,
	GX_UINT16 = 6,
	GX_UINT32 = 7,
	GX_UINT64 = 8,
	GX_FLOAT16 = 9,
	GX_BFLOAT16 = 10,
	GX_FLOAT32 = 11,
	GX_FLOAT64 = 12
};

/* Reduction operators, numbered as coll.Op (0 is invalid). */
enum gx_op {
	GX_OP_INVALID = 0,
	GX_SUM = 1,
	GX_PROD = 2,
	GX_MIN = 3,
	GX_MAX = 4,
	GX_LAND = 5,
	GX_LOR = 6,
	GX_BAND = 7,
	GX_BOR = 8,
	GX_BXOR = 9
};

/*
 * gx_reduce_fn computes dst[i] = dst[i] OP src[i] for the n ELEMENTS
 * (not bytes) of dst and src. The buffers hold little-endian elements;
 * they may be the same buffer but must not partially overlap. Elements are
 * accessed through memcpy, so no alignment is required, though aligned
 * buffers are faster.
 */
typedef void (*gx_reduce_fn)(void *dst, const void *src, size_t n);

/*
 * gx_reduce_kernel returns the kernel of (dtype, op), or NULL for an
 * unknown dtype or op and for a bitwise op (band, bor, bxor) on a float
 * dtype, the pairs coll.Supports rejects.
 */
gx_reduce_fn gx_reduce_kernel(int dtype, int op);

#endif /* GORING_CEXEC_REDUCE_H */
