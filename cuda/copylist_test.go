package cuda

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
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
	d := devices(t, 1)[0]
	s, err := d.NewStream()
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Destroy()) }()
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

// scratchBuffer is n bytes of d's memory, freed when the test ends.
func scratchBuffer(t *testing.T, d *Device, n int) *Buffer {
	t.Helper()
	b, err := d.Alloc(n)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Free()) })
	return b
}
