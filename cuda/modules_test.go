package cuda

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
)

// Every Device of a GPU shares one load of each kernel family, and the
// kernels keep working after the Device that loaded them has closed (the
// modules' context stays retained): a process that opens the GPU per team
// loads its kernels once.
func TestKernelsLoadOncePerGPU(t *testing.T) {
	// No Device held besides the test's own: closing the first must leave
	// the context alive only through the kernels' retain.
	if n, err := DeviceCount(); IsNoDriver(err) || n < 1 {
		t.Skipf("skipping GPU test: %d GPUs, %v", n, err)
	}
	first, err := Open(0)
	require.NoError(t, err)
	require.NoError(t, first.LoadKernels())
	m1, err := first.reduceKernels()
	require.NoError(t, err)
	n1, err := first.nodeKernels()
	require.NoError(t, err)
	require.NoError(t, first.Close())

	d, err := Open(0)
	require.NoError(t, err)
	defer d.Close()
	m2, err := d.reduceKernels()
	require.NoError(t, err)
	n2, err := d.nodeKernels()
	require.NoError(t, err)
	require.Same(t, m1, m2, "the reduce family is loaded once per GPU")
	require.Same(t, n1, n2, "the node family is loaded once per GPU")

	// A reduction with the functions the closed Device looked up.
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	a, b := make([]byte, 4*1000), make([]byte, 4*1000)
	for i := range 1000 {
		binary.LittleEndian.PutUint32(a[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(2*i)))
	}
	dst, err := d.Alloc(len(a))
	require.NoError(t, err)
	defer dst.Free()
	src, err := d.Alloc(len(b))
	require.NoError(t, err)
	defer src.Free()
	require.NoError(t, dst.CopyFromHost(0, a))
	require.NoError(t, src.CopyFromHost(0, b))
	require.NoError(t, ReduceAsync(s, dst, 0, src, 0, len(a), coll.Float32, coll.Sum))
	require.NoError(t, s.Synchronize())
	got := make([]byte, len(a))
	require.NoError(t, dst.CopyToHost(got, 0))
	for i := range 1000 {
		require.Equal(t, float32(3*i), math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])), "element %d", i)
	}
}
