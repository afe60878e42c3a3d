package cexec

/*
#cgo CFLAGS: -O2 -Wall
#include "reduce.h"

// gx_reduce_run looks up and runs a kernel in one C call: cgo cannot call
// a C function pointer from Go, and one crossing instead of two halves the
// fixed cost of a small reduction. It returns -1 when the pair has no
// kernel, 0 otherwise.
static inline int gx_reduce_run(int dtype, int op, void *dst, const void *src, size_t n) {
	gx_reduce_fn f = gx_reduce_kernel(dtype, op);
	if (f == NULL)
		return -1;
	f(dst, src, n);
	return 0;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
)

// HasKernel reports whether reduce.c has a kernel for dtype d and op o. It
// asks the C table itself, so tests can check that the table and
// coll.Supports agree on every pair.
func HasKernel(d coll.Dtype, o coll.Op) bool {
	return C.gx_reduce_kernel(C.int(d), C.int(o)) != nil
}

// Reduce computes dst = dst OP src element-wise for dtype d with the C
// kernel of (d, o), giving exactly the bytes exec/reduce.Into gives. It
// checks what Into checks, in the same order: that the pair is valid
// (bitwise ops are integer-only), then that dst and src have the same
// length, a whole number of elements, and are aligned to the element size.
// The alignment rule is exec/reduce's, kept so that both accept the same
// buffers, although the C kernels would not need it.
func Reduce(dst, src []byte, d coll.Dtype, o coll.Op) error {
	if err := kernelError(d, o); err != nil {
		return err
	}
	if err := reduce.Check(d, dst, src); err != nil {
		return err
	}
	if len(dst) == 0 {
		// No element to combine, and no data pointer to hand C.
		return nil
	}
	// The C call neither keeps the pointers nor stores Go pointers through
	// them (the buffers hold plain bytes), so passing the slices' memory
	// follows cgo's pointer rules without copying.
	rc := C.gx_reduce_run(C.int(d), C.int(o),
		unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src)),
		C.size_t(len(dst)/d.Size()))
	if rc != 0 {
		// coll.Supports accepted the pair but the C table lacks it: the
		// two went out of step, which TestKernelTable catches.
		return fmt.Errorf("cexec: reduce.c has no kernel for dtype %v, op %v", d, o)
	}
	return nil
}

// kernelError says why (d, o) has no kernel, or returns nil if it has one.
// Validity is coll.Supports, UCC's rule, which the C table mirrors.
func kernelError(d coll.Dtype, o coll.Op) error {
	switch {
	case coll.Supports(o, d):
		return nil
	case d.Size() == 0:
		return fmt.Errorf("cexec: no reduction kernel for dtype %v, op %v: invalid dtype", d, o)
	case o.Bitwise() && d.IsFloat():
		return fmt.Errorf("cexec: no reduction kernel for dtype %v, op %v: bitwise ops are defined only for integer dtypes", d, o)
	}
	return fmt.Errorf("cexec: no reduction kernel for dtype %v, op %v: invalid op", d, o)
}
