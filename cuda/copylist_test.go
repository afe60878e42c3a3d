package cuda

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
)

// copyListCase lays out n copies between two buffers: odd sizes (zero
// included, and a few longer than a piece, split on the host), source and
// destination offsets each aligned to 16, to the same remainder modulo 16
// or to different ones, no two copies' bytes overlapping on either side.
func copyListCase(rng *rand.Rand, n int) (list []CopyDesc, srcLen, dstLen int) {
	for i := range n {
		size := rng.IntN(300)
		switch {
		case i%97 == 5:
			size = copyListPiece + rng.IntN(3*copyListPiece)
		case i%13 == 0:
			size = 0
		}
		srcLen += rng.IntN(40) // a gap
		dstLen += rng.IntN(40)
		switch rng.IntN(3) {
		case 0: // both aligned: vectors only
			srcLen, dstLen = (srcLen+15)&^15, (dstLen+15)&^15
		case 1: // the same remainder: bytes up to 16, then vectors
			dstLen += ((srcLen-dstLen)%16 + 16) % 16
		}
		list = append(list, CopyDesc{Src: DevicePtr(srcLen), Dst: DevicePtr(dstLen), Bytes: size})
		srcLen += size
		dstLen += size
	}
	return list, srcLen + 1, dstLen + 1
}

// The copy-list kernel copies every listed range byte for byte and writes
// nothing else, for lists of 1 to 10000 copies on one stream (the
// descriptors' device array reused, and grown, between lists).
func TestCopyList(t *testing.T) {
	d, s := listStream(t)
	rng := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{1, 2, 3, 17, 256, 10000, 5, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rel, srcLen, dstLen := copyListCase(rng, n)
			src, dst := scratchBuffer(t, d, srcLen), scratchBuffer(t, d, dstLen)
			in := make([]byte, srcLen)
			for i := range in {
				in[i] = byte(rng.Uint32())
			}
			require.NoError(t, src.CopyFromHost(0, in))
			require.NoError(t, dst.Memset(0, dstLen, 0xa5))
			// The buffers' bases are 256-byte aligned, so the offsets'
			// alignments are the addresses'.
			list := make([]CopyDesc, len(rel))
			want := bytes.Repeat([]byte{0xa5}, dstLen)
			for i, c := range rel {
				list[i] = CopyDesc{Src: src.Ptr() + c.Src, Dst: dst.Ptr() + c.Dst, Bytes: c.Bytes}
				copy(want[c.Dst:int(c.Dst)+c.Bytes], in[c.Src:int(c.Src)+c.Bytes])
			}
			require.NoError(t, CopyListAsync(s, list))
			require.NoError(t, s.Synchronize())
			got := make([]byte, dstLen)
			require.NoError(t, dst.CopyToHost(got, 0))
			if !bytes.Equal(want, got) {
				for i := range want {
					if want[i] != got[i] {
						t.Fatalf("%d copies: byte %d of the destination is %#x, want %#x", n, i, got[i], want[i])
					}
				}
			}
		})
	}
	require.NoError(t, CopyListAsync(s, nil), "an empty list queues nothing")
	require.Error(t, CopyListAsync(s, []CopyDesc{{Bytes: -1}}))
}

// listStream is the first device and a stream of it, destroyed when the
// test ends (skipping the test without a driver).
func listStream(t *testing.T) (*Device, *Stream) {
	t.Helper()
	d := devices(t, 1)[0]
	s, err := d.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Destroy()) })
	return d, s
}

// scratchBuffer is n bytes of d's memory, freed when the test ends.
func scratchBuffer(t *testing.T, d *Device, n int) *Buffer {
	t.Helper()
	b, err := d.Alloc(n)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Free()) })
	return b
}

// reduceListCase lays out n reductions of elements of size bytes between
// two buffers: odd element counts (zero included, and a few longer than
// a piece, split on the host), offsets aligned to 16 (the vector path)
// or only to the element (the element path), no two reductions' bytes
// overlapping on either side. Offsets are relative to the buffers.
func reduceListCase(rng *rand.Rand, n, size int) (list []ReduceDesc, srcLen, dstLen int) {
	for i := range n {
		elems := rng.IntN(300)
		switch {
		case i%97 == 5:
			elems = (copyListPiece + rng.IntN(3*copyListPiece)) / size
		case i%13 == 0:
			elems = 0
		}
		srcLen += size * rng.IntN(8) // a gap
		dstLen += size * rng.IntN(8)
		if rng.IntN(2) == 0 {
			srcLen, dstLen = (srcLen+15)&^15, (dstLen+15)&^15
		}
		list = append(list, ReduceDesc{Src: DevicePtr(srcLen), Dst: DevicePtr(dstLen), Bytes: elems * size})
		srcLen += elems * size
		dstLen += elems * size
	}
	return list, srcLen + size, dstLen + size
}

// The reduce-list kernels give every listed destination the host
// kernels' result bit for bit (exec/reduce), for every dtype and op, and
// write nothing else, for lists of 1 to 5000 reductions on one stream;
// then a second list over the same destinations, queued after the first,
// applies on top of it (reductions into one range in order; not for
// float products, see below).
func TestReduceList(t *testing.T) {
	d, s := listStream(t)
	rng := rand.New(rand.NewPCG(5, 13))
	sizes := []int{1, 2, 3, 5000, 17, 256, 1000}
	k := 0
	for _, dt := range coll.Dtypes {
		for _, op := range coll.Ops {
			if !coll.Supports(op, dt) {
				continue
			}
			n := sizes[k%len(sizes)]
			k++
			t.Run(fmt.Sprintf("%v/%v/%d", dt, op, n), func(t *testing.T) {
				host, err := reduce.Kernel(dt, op)
				require.NoError(t, err)
				size := dt.Size()
				rel, srcLen, dstLen := reduceListCase(rng, n, size)
				src, dst := scratchBuffer(t, d, srcLen), scratchBuffer(t, d, dstLen)
				in := finiteInput(rng, dt, srcLen/size)
				want := finiteInput(rng, dt, dstLen/size)
				require.NoError(t, src.CopyFromHost(0, in))
				require.NoError(t, dst.CopyFromHost(0, want))
				list := make([]ReduceDesc, len(rel))
				for i, c := range rel {
					// The buffers' bases are 256-byte aligned, so the
					// offsets' alignments are the addresses'.
					list[i] = ReduceDesc{Src: src.Ptr() + c.Src, Dst: dst.Ptr() + c.Dst, Bytes: c.Bytes}
				}
				rounds := 2
				if dt.IsFloat() && op == coll.Prod {
					// A first round's product may overflow to
					// infinity, and infinity times a zero is a NaN
					// whose payload host and GPU choose differently
					// (finiteInput).
					rounds = 1
				}
				for round := range rounds {
					for _, c := range rel {
						host(want[c.Dst:int(c.Dst)+c.Bytes], in[c.Src:int(c.Src)+c.Bytes])
					}
					require.NoError(t, ReduceListAsync(s, list, dt, op))
					require.NoError(t, s.Synchronize())
					got := make([]byte, dstLen)
					require.NoError(t, dst.CopyToHost(got, 0))
					if !bytes.Equal(want, got) {
						for i := 0; i < dstLen; i += size {
							if !bytes.Equal(want[i:i+size], got[i:i+size]) {
								t.Fatalf("round %d, %d reductions: element at byte %d of the destination is % x, want % x", round, n, i, got[i:i+size], want[i:i+size])
							}
						}
					}
				}
			})
		}
	}
	require.NoError(t, ReduceListAsync(s, nil, coll.Float32, coll.Sum), "an empty list queues nothing")
	require.Error(t, ReduceListAsync(s, []ReduceDesc{{Bytes: 6}}, coll.Float32, coll.Sum), "not whole elements")
	require.Error(t, ReduceListAsync(s, []ReduceDesc{{Src: 2, Bytes: 4}}, coll.Float32, coll.Sum), "a misaligned source")
	require.Error(t, ReduceListAsync(s, []ReduceDesc{{Bytes: 4}}, coll.Float32, coll.Band), "no band on floats")
}
