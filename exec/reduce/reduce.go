package reduce

import (
	"fmt"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"golang.org/x/exp/constraints"
)

// Func computes dst = dst OP src element-wise. len(dst) must equal
// len(src), be a multiple of the element size, and both must be aligned to
// the element size; Check verifies that, Kernel's functions assume it.
type Func func(dst, src []byte)

// number is every element type a kernel handles natively.
type number interface {
	constraints.Integer | constraints.Float
}

// kernels holds every valid (dtype, op) pair's Func, built once so that
// Kernel is a table lookup that allocates nothing.
var kernels = func() (t [coll.Float64 + 1][coll.Bxor + 1]Func) {
	for _, d := range coll.Dtypes {
		for _, o := range coll.Ops {
			if coll.Supports(o, d) {
				t[d][o] = build(d, o)
			}
		}
	}
	return t
}()

// Kernel returns the function that reduces dtype d with op o. It fails for
// an unknown dtype or op and for a bitwise op on a float type. Neither
// Kernel nor the returned Func allocates.
func Kernel(d coll.Dtype, o coll.Op) (Func, error) {
	if int(d) < len(kernels) && int(o) < len(kernels[d]) && kernels[d][o] != nil {
		return kernels[d][o], nil
	}
	if d.Size() == 0 {
		return nil, fmt.Errorf("reduce: invalid dtype %v", d)
	}
	if !coll.Supports(o, d) {
		if o.Bitwise() && d.IsFloat() {
			return nil, fmt.Errorf("reduce: op %v is bitwise and defined only for integer dtypes, not %v", o, d)
		}
		return nil, fmt.Errorf("reduce: invalid op %v", o)
	}
	return nil, fmt.Errorf("reduce: no kernel for %v/%v", d, o)
}

func build(d coll.Dtype, o coll.Op) Func {
	switch d {
	case coll.Int8:
		return typed[int8](o)
	case coll.Int16:
		return typed[int16](o)
	case coll.Int32:
		return typed[int32](o)
	case coll.Int64:
		return typed[int64](o)
	case coll.Uint8:
		return typed[uint8](o)
	case coll.Uint16:
		return typed[uint16](o)
	case coll.Uint32:
		return typed[uint32](o)
	case coll.Uint64:
		return typed[uint64](o)
	case coll.Float32:
		if o == coll.Sum && haveVectorSum {
			return func(dst, src []byte) {
				d := view[float32](dst)
				sumFloat32(d, view[float32](src)[:len(d)])
			}
		}
		return typed[float32](o)
	case coll.Float64:
		if o == coll.Sum && haveVectorSum {
			return func(dst, src []byte) {
				d := view[float64](dst)
				sumFloat64(d, view[float64](src)[:len(d)])
			}
		}
		return typed[float64](o)
	case coll.Float16:
		return func(dst, src []byte) { halfReduce(view[uint16](dst), view[uint16](src), o) }
	case coll.Bfloat16:
		return func(dst, src []byte) { bf16Reduce(view[uint16](dst), view[uint16](src), o) }
	}
	return nil
}

// Check reports why dst and src cannot be reduced as dtype d: different
// lengths, a length that is not a whole number of elements, or misaligned
// memory.
func Check(d coll.Dtype, dst, src []byte) error {
	size := d.Size()
	if size == 0 {
		return fmt.Errorf("reduce: invalid dtype %v", d)
	}
	if len(dst) != len(src) {
		return fmt.Errorf("reduce: dst has %d bytes, src %d", len(dst), len(src))
	}
	if len(dst)%size != 0 {
		return fmt.Errorf("reduce: %d bytes is not a whole number of %v elements (%d bytes each)", len(dst), d, size)
	}
	if !Aligned(dst, size) || !Aligned(src, size) {
		return fmt.Errorf("reduce: buffers must be aligned to %d bytes for %v", size, d)
	}
	return nil
}

// Aligned reports whether b starts at an address that is a multiple of
// align (an empty slice always is).
func Aligned(b []byte, align int) bool {
	return len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(align) == 0
}

// Into computes dst = dst OP src for dtype d, after checking the buffers.
func Into(d coll.Dtype, o coll.Op, dst, src []byte) error {
	f, err := Kernel(d, o)
	if err != nil {
		return err
	}
	if err := Check(d, dst, src); err != nil {
		return err
	}
	f(dst, src)
	return nil
}

// view reinterprets b as a slice of T in place.
func view[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// typed returns the byte-level Func of a native element type.
func typed[T number](o coll.Op) Func {
	return func(dst, src []byte) { apply(o, view[T](dst), view[T](src)) }
}

// apply runs op o over d and s, which have the same length. The op switch
// is outside the loops so each loop is a tight body the compiler can
// unroll and bounds-check-eliminate.
func apply[T number](o coll.Op, d, s []T) {
	s = s[:len(d)]
	switch o {
	case coll.Sum:
		// Four independent adds per iteration keep more of them in flight
		// than the one-element loop (the compiler does not unroll).
		i := 0
		for ; i+4 <= len(d); i += 4 {
			dd, ss := d[i:i+4:i+4], s[i:i+4:i+4]
			dd[0] += ss[0]
			dd[1] += ss[1]
			dd[2] += ss[2]
			dd[3] += ss[3]
		}
		for ; i < len(d); i++ {
			d[i] += s[i]
		}
	case coll.Prod:
		for i := range d {
			d[i] *= s[i]
		}
	case coll.Min:
		for i := range d {
			d[i] = min(d[i], s[i])
		}
	case coll.Max:
		for i := range d {
			d[i] = max(d[i], s[i])
		}
	case coll.Land:
		for i := range d {
			d[i] = truth[T](d[i] != 0 && s[i] != 0)
		}
	case coll.Lor:
		for i := range d {
			d[i] = truth[T](d[i] != 0 || s[i] != 0)
		}
	case coll.Band, coll.Bor, coll.Bxor:
		bitwise(o, d, s)
	}
}

func truth[T number](b bool) T {
	if b {
		return 1
	}
	return 0
}

// bitwise applies band/bor/bxor. Kernel never selects it for float types;
// it reinterprets the element bits as unsigned integers of the same size so
// that one generic body serves every integer type.
func bitwise[T number](o coll.Op, d, s []T) {
	var z T
	switch unsafe.Sizeof(z) {
	case 1:
		bits(o, castSlice[T, uint8](d), castSlice[T, uint8](s))
	case 2:
		bits(o, castSlice[T, uint16](d), castSlice[T, uint16](s))
	case 4:
		bits(o, castSlice[T, uint32](d), castSlice[T, uint32](s))
	case 8:
		bits(o, castSlice[T, uint64](d), castSlice[T, uint64](s))
	}
}

func castSlice[T, U any](x []T) []U {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

func bits[U constraints.Unsigned](o coll.Op, d, s []U) {
	s = s[:len(d)]
	switch o {
	case coll.Band:
		for i := range d {
			d[i] &= s[i]
		}
	case coll.Bor:
		for i := range d {
			d[i] |= s[i]
		}
	case coll.Bxor:
		for i := range d {
			d[i] ^= s[i]
		}
	}
}

// halfReduce reduces float16 data: both operands widened (by table) to
// float32, the float32 operation, the result rounded back. One loop per op
// so each body is straight-line code.
func halfReduce(d, s []uint16, o coll.Op) {
	s = s[:len(d)]
	w := widenTable()
	switch o {
	case coll.Sum:
		for i := range d {
			x := w[d[i]] + w[s[i]]
			if h, ok := halfFast(x); ok {
				d[i] = h
			} else {
				d[i] = Float32ToHalf(x)
			}
		}
	case coll.Prod:
		for i := range d {
			x := w[d[i]] * w[s[i]]
			if h, ok := halfFast(x); ok {
				d[i] = h
			} else {
				d[i] = Float32ToHalf(x)
			}
		}
	case coll.Min:
		for i := range d {
			x := min(w[d[i]], w[s[i]])
			if h, ok := halfFast(x); ok {
				d[i] = h
			} else {
				d[i] = Float32ToHalf(x)
			}
		}
	case coll.Max:
		for i := range d {
			x := max(w[d[i]], w[s[i]])
			if h, ok := halfFast(x); ok {
				d[i] = h
			} else {
				d[i] = Float32ToHalf(x)
			}
		}
	case coll.Land:
		for i := range d {
			d[i] = halfTruth(w[d[i]] != 0 && w[s[i]] != 0, 0x3c00)
		}
	case coll.Lor:
		for i := range d {
			d[i] = halfTruth(w[d[i]] != 0 || w[s[i]] != 0, 0x3c00)
		}
	}
}

// bf16Reduce is halfReduce for bfloat16, whose widening is a shift.
func bf16Reduce(d, s []uint16, o coll.Op) {
	s = s[:len(d)]
	switch o {
	case coll.Sum:
		for i := range d {
			d[i] = Float32ToBFloat16(BFloat16ToFloat32(d[i]) + BFloat16ToFloat32(s[i]))
		}
	case coll.Prod:
		for i := range d {
			d[i] = Float32ToBFloat16(BFloat16ToFloat32(d[i]) * BFloat16ToFloat32(s[i]))
		}
	case coll.Min:
		for i := range d {
			d[i] = Float32ToBFloat16(min(BFloat16ToFloat32(d[i]), BFloat16ToFloat32(s[i])))
		}
	case coll.Max:
		for i := range d {
			d[i] = Float32ToBFloat16(max(BFloat16ToFloat32(d[i]), BFloat16ToFloat32(s[i])))
		}
	case coll.Land:
		for i := range d {
			d[i] = halfTruth(d[i]&0x7fff != 0 && s[i]&0x7fff != 0, 0x3f80)
		}
	case coll.Lor:
		for i := range d {
			d[i] = halfTruth(d[i]&0x7fff != 0 || s[i]&0x7fff != 0, 0x3f80)
		}
	}
}

// halfTruth is one (bits of 1.0 in the format) or zero.
func halfTruth(b bool, one uint16) uint16 {
	if b {
		return one
	}
	return 0
}
