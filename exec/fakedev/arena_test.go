package fakedev

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// Fake memory is not host memory: reading it as such panics, and the
// arena checks every range against its allocations and devices.
func TestArenaKeepsDeviceBytesApart(t *testing.T) {
	a := New(1)
	r := a.Alloc(1, 16)
	assert.Equal(t, exec.Mem{Kind: exec.MemFake, Device: 1}, r.Mem())
	assert.Panics(t, func() { _ = r.Bytes() }, "host access to device memory")
	assert.GreaterOrEqual(t, uint64(r.Addr()), uint64(base))

	require.NoError(t, a.Write(r, []byte("0123456789abcdef")))
	got, err := a.Read(r.Slice(4, 4))
	require.NoError(t, err)
	assert.Equal(t, "4567", string(got))

	_, err = a.Read(exec.DeviceRegion(r.Mem(), r.Addr()+8, 9))
	assert.ErrorContains(t, err, "runs off")
	_, err = a.Read(exec.DeviceRegion(exec.Mem{Kind: exec.MemFake, Device: 0}, r.Addr(), 4))
	assert.ErrorContains(t, err, "memory of fake:1")
	_, err = a.Read(exec.DeviceRegion(exec.Mem{Kind: exec.MemFake}, 0x1000, 4))
	assert.ErrorContains(t, err, "in no allocation")
	assert.ErrorContains(t, a.Write(r, []byte("short")), "write of 5 bytes")

	host := make([]byte, 16)
	require.NoError(t, a.Copy(exec.HostRegion(host), r))
	assert.Equal(t, "0123456789abcdef", string(host))
}

// The executor runs nothing at Local: work happens at Poll, a random part
// of the queue at a time, and a cancelled step never runs.
func TestLocalRunsAtPoll(t *testing.T) {
	a := New(7)
	l := a.Local()
	dst, src := a.Alloc(0, 8), a.Alloc(0, 8)
	require.NoError(t, a.Write(dst, []byte{1, 0, 0, 0, 2, 0, 0, 0}))
	require.NoError(t, a.Write(src, []byte{10, 0, 0, 0, 20, 0, 0, 0}))
	op := exec.LocalOp{Token: 1, Kind: sched.OpReduce, Dst: dst, Src: src, Dtype: coll.Int32, Op: coll.Sum}
	done, err := l.Local(&op)
	require.NoError(t, err)
	assert.False(t, done)
	other := a.Alloc(0, 8)
	cp := exec.LocalOp{Token: 2, Kind: sched.OpCopy, Dst: other, Src: src}
	_, err = l.Local(&cp)
	require.NoError(t, err)
	require.NoError(t, l.Cancel(2))
	before, _ := a.Read(dst)
	assert.Equal(t, []byte{1, 0, 0, 0, 2, 0, 0, 0}, before, "nothing ran before Poll")
	assert.Equal(t, 1, l.Pending())
	var comps []exec.Completion
	for l.Pending() > 0 {
		comps = l.Poll(comps)
	}
	require.Len(t, comps, 1)
	assert.Equal(t, uint64(1), comps[0].Token)
	require.NoError(t, comps[0].Err)
	after, _ := a.Read(dst)
	assert.Equal(t, []byte{11, 0, 0, 0, 22, 0, 0, 0}, after)
	untouched, _ := a.Read(other)
	assert.Equal(t, []byte{0xDD, 0xDD, 0xDD, 0xDD, 0xDD, 0xDD, 0xDD, 0xDD}, untouched, "cancelled copy never ran")
}
