// Package reduce combines two host buffers element by element: dst = dst OP
// src, for every datatype and operator of package coll (UCC's set).
//
// It is the host implementation of the executor's reduce step. Buffers are
// plain []byte, viewed in place as typed slices (the host is little-endian,
// as every platform goring runs on), so a kernel is one tight loop with no
// conversion per element for the native types.
//
// # Semantics
//
//   - sum, prod: the type's own arithmetic. Integers wrap around (two's
//     complement), floats round to nearest even.
//   - min, max: the smaller/larger value. For floats a NaN operand gives NaN
//     (NaN propagates, as Go's built-in min and max and IEEE 754-2019
//     minimum/maximum do), and -0 < +0.
//   - land, lor: logical and/or of "value != 0"; the result is 1 or 0 in the
//     element type. A NaN counts as true (NaN != 0).
//   - band, bor, bxor: bitwise, integer types only; Kernel rejects them for
//     float types with an error, as UCC does.
//
// # float16 and bfloat16
//
// Half types are reduced by converting both operands to float32, applying the
// float32 operator and rounding the result back to nearest, ties to even
// (HalfToFloat32, Float32ToHalf, BFloat16ToFloat32, Float32ToBFloat16; the
// float16 kernels widen through a 256 KiB table built on first use). prod,
// min, max, land and lor are therefore exact (correctly rounded); sum is
// rounded twice (to float32, then to the half type), which can differ from a
// correctly rounded half sum only when the float32 sum itself was inexact,
// i.e. for operands whose exponents differ by more than about 13 (float16)
// or 16 (bfloat16) binades.
//
// NaN: widening keeps the sign and puts the payload in the top mantissa bits
// of the float32; narrowing keeps the sign and the top payload bits and sets
// the quiet bit, so a NaN never turns into an infinity. Values beyond the
// half type's range round to infinity following round-to-nearest-even (for
// float16, |x| >= 65520 gives Inf).
//
// # Alignment
//
// Typed views need buffers aligned to the element size. Go's make([]byte, n)
// with n a multiple of the element size is aligned; so is registered or
// device-mapped memory. Misaligned buffers are rejected with an error rather
// than read with a slower path.
package reduce
