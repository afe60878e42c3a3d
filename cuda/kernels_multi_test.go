package cuda

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
)

// The multi kernels give the host's left fold over the sources, in
// source order, bit for bit, in every destination: every dtype and op,
// 1-8 sources and destinations, aligned (vector path) and misaligned
// (element path) operands, odd lengths, and a destination that is also a
// source (in place).
func TestReduceMultiMatchesHost(t *testing.T) {
	d := devices(t, 1)[0]
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	const maxElems = 20011
	slot := maxElems*8 + 64
	buf, err := d.Alloc(2 * MultiMax * slot)
	require.NoError(t, err)
	defer buf.Free()
	rng := rand.New(rand.NewPCG(3, 4))
	cases := 0
	for _, dt := range coll.Dtypes {
		for _, op := range coll.Ops {
			if !coll.Supports(op, dt) {
				continue
			}
			host, err := reduce.Kernel(dt, op)
			require.NoError(t, err)
			for _, c := range []struct {
				n, nsrc, ndst, skew int
				inPlace             bool
			}{{1, 1, 1, 0, false}, {5, 3, 2, 0, false}, {maxElems, 4, 4, 0, false}, {maxElems, 8, 8, 0, true},
				{1001, 3, 3, dt.Size(), false}, {4099, 2, 8, 0, true}} {
				nb := c.n * dt.Size()
				ins := make([][]byte, c.nsrc)
				srcs := make([]DevicePtr, c.nsrc)
				for i := range ins {
					off := i*slot + c.skew*i
					ins[i] = finiteInput(rng, dt, c.n)
					require.NoError(t, buf.CopyFromHost(off, ins[i]))
					srcs[i] = buf.Ptr() + DevicePtr(off)
				}
				dsts := make([]DevicePtr, c.ndst)
				offs := make([]int, c.ndst)
				for j := range dsts {
					offs[j] = (MultiMax+j)*slot + c.skew*j
					if c.inPlace && j == 0 {
						offs[j] = c.nsrc / 2 * slot // the middle source
						if c.skew != 0 {
							offs[j] += c.skew * (c.nsrc / 2)
						}
					}
					dsts[j] = buf.Ptr() + DevicePtr(offs[j])
				}
				require.NoError(t, ReduceMultiAddrAsync(s, dsts, srcs, nb, dt, op))
				require.NoError(t, s.Synchronize())
				want := append([]byte(nil), ins[0]...)
				for _, in := range ins[1:] {
					host(want, in)
				}
				for j, off := range offs {
					got := make([]byte, nb)
					require.NoError(t, buf.CopyToHost(got, off))
					sameNaNs(want, got, dt)
					require.Equal(t, want, got, "%v/%v n=%d %d sources, destination %d of %d, skew %d, in place %v", dt, op, c.n, c.nsrc, j, c.ndst, c.skew, c.inPlace)
				}
				cases++
			}
		}
	}
	t.Logf("%d (dtype, op, shape) cases bit-identical to the host", cases)
}

// sameNaNs makes got's NaNs the bits of want's where both are NaN. Finite
// inputs reduced over many sources can make a NaN (a product overflows to
// infinity, then meets a zero), and which NaN is the hardware's: the host
// (x86) makes 0xffc00000, the GPU 0x7fffffff. Every rank gets the GPU's
// bits alike; only the payload differs from the host's.
func sameNaNs(want, got []byte, dt coll.Dtype) {
	isNaN := func(b []byte) bool {
		switch dt {
		case coll.Float16:
			h := binary.LittleEndian.Uint16(b)
			return h&0x7c00 == 0x7c00 && h&0x3ff != 0
		case coll.Bfloat16:
			h := binary.LittleEndian.Uint16(b)
			return h&0x7f80 == 0x7f80 && h&0x7f != 0
		case coll.Float32:
			return math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
		case coll.Float64:
			return math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
		return false
	}
	size := dt.Size()
	for i := 0; i+size <= len(want); i += size {
		if isNaN(want[i:i+size]) && isNaN(got[i:i+size]) {
			copy(got[i:i+size], want[i:i+size])
		}
	}
}

// CopyMultiAddrAsync writes its source to every destination, aligned or
// not, any byte length; bad counts are refused.
func TestCopyMulti(t *testing.T) {
	d := devices(t, 1)[0]
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	const slot = 1 << 20
	buf, err := d.Alloc((MultiMax + 1) * slot)
	require.NoError(t, err)
	defer buf.Free()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ n, ndst, skew int }{{1, 1, 0}, {17, 3, 1}, {slot - 64, MultiMax, 0}, {4097, 5, 3}} {
		in := make([]byte, c.n)
		for i := range in {
			in[i] = byte(rng.IntN(256))
		}
		require.NoError(t, buf.CopyFromHost(c.skew, in))
		dsts := make([]DevicePtr, c.ndst)
		for j := range dsts {
			dsts[j] = buf.Ptr() + DevicePtr((j+1)*slot+c.skew*j)
		}
		require.NoError(t, CopyMultiAddrAsync(s, dsts, buf.Ptr()+DevicePtr(c.skew), c.n))
		require.NoError(t, s.Synchronize())
		for j := range dsts {
			got := make([]byte, c.n)
			require.NoError(t, buf.CopyToHost(got, (j+1)*slot+c.skew*j))
			require.Equal(t, in, got, "n=%d destination %d skew %d", c.n, j, c.skew)
		}
	}
	require.Error(t, CopyMultiAddrAsync(s, make([]DevicePtr, MultiMax+1), buf.Ptr(), 16))
	require.Error(t, CopyMultiAddrAsync(s, nil, buf.Ptr(), 16))
	require.Error(t, ReduceMultiAddrAsync(s, []DevicePtr{buf.Ptr() + 1}, []DevicePtr{buf.Ptr()}, 4, coll.Float32, coll.Sum))
}
