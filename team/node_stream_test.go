package team

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
)

// Node calls on the caller's stream (PostOn, stream.go), one process per
// GPU. Each rank queues on a stream of its own the upload of its input,
// posts the allreduce on that stream, queues the download of the result
// behind it and waits for the stream alone, before asking goring whether
// the call has completed: the download holds the sums only if the kernels
// ran after the upload and before the download, on that stream.
func TestNodeCallsOnCallersStream(t *testing.T) {
	runNodeChildren(t, "node-stream", "stream calls", 90*time.Second)
}

// runNodeChildren runs mode's children, one a rank of the node tests
// (nodeGPUs), until each has printed its verdict (what, then " right" or
// more) or failed, within limit; then lets them exit and checks that
// every one printed what+" right".
func runNodeChildren(t *testing.T, mode, what string, limit time.Duration) {
	n := nodeGPUs(t)
	cmds, outs, dir := startRanks(t, n, mode)
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		ended := 0
		for r := range n {
			if o := outs[r].String(); strings.Contains(o, what) || strings.Contains(o, "child error") {
				ended++
			}
		}
		if ended == n {
			break
		}
		require.True(t, time.Now().Before(deadline), "ranks still running: %v", outs)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit"), nil, 0o644))
	waitAll(t, cmds, outs, 30*time.Second)
	for r, o := range outs {
		assert.Contains(t, o.String(), what+" right", "rank %d", r)
	}
}

// nodeStreamChild is one rank of TestNodeCallsOnCallersStream, on GPU
// rank.
func nodeStreamChild(t *Team, ctx *Context, rank, size int, dir string) error {
	d, err := openNodeGPU(rank)
	if err != nil {
		return err
	}
	defer d.Close()
	const n = 1 << 20 // float32 elements, 4 MiB: two-shot on more than two ranks, one-shot on a pair
	bytes := 4 * n
	src, err := d.Alloc(bytes)
	if err != nil {
		return err
	}
	defer func() { _ = src.Free() }()
	dst, err := d.Alloc(bytes)
	if err != nil {
		return err
	}
	defer func() { _ = dst.Free() }()
	hin, err := d.AllocHost(bytes)
	if err != nil {
		return err
	}
	defer func() { _ = hin.Free() }()
	hout, err := d.AllocHost(bytes)
	if err != nil {
		return err
	}
	defer func() { _ = hout.Free() }()
	us, err := d.NewStream() // the caller's stream
	if err != nil {
		return err
	}
	defer func() { _ = us.Destroy() }()
	sp, dp := src.Ptr(), dst.Ptr()
	a := Args{Coll: coll.Allreduce, Src: *(*unsafe.Pointer)(unsafe.Pointer(&sp)), Dst: *(*unsafe.Pointer)(unsafe.Pointer(&dp)),
		Count: n, Dtype: coll.Float32, Op: coll.Sum, Mem: MemCUDA}
	fill := func(k int) {
		b := hin.Bytes()
		for i := range n {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(rank+i%5+10*k)))
		}
	}
	check := func(k int, what string) error {
		b := hout.Bytes()
		for i := range n {
			want := float32(size*(size-1)/2 + size*(i%5+10*k))
			if v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])); v != want {
				return fmt.Errorf("%s, call %d: element %d = %v, want %v", what, k, i, v, want)
			}
		}
		return nil
	}
	wait := func(c *Coll) error {
		for {
			done, err := c.Test()
			if err != nil || done {
				return err
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	// Call 0: refused on the stream before the team's node regions are
	// set up; PrepareStream sets them up, moving no data, and then the
	// call goes on the stream.
	if err := dst.Memset(0, bytes, 0); err != nil {
		return err
	}
	fill(0)
	if err := cuda.CopyHtoDAsync(us, src, 0, hin, 0, bytes); err != nil {
		return err
	}
	first, err := NewColl(t, a)
	if err != nil {
		return err
	}
	defer first.Finalize()
	if err := first.PostOn(us.Handle()); StatusOf(err) != StatusNotSupported {
		return fmt.Errorf("the team's first call on the stream: %v, want it refused", err)
	}
	ready, err := first.PrepareStream()
	if err != nil || !ready {
		return fmt.Errorf("PrepareStream: ready %v, %v", ready, err)
	}
	if err := dst.CopyToHost(hout.Bytes(), 0); err != nil {
		return err
	}
	for i, v := range hout.Bytes() {
		if v != 0 {
			return fmt.Errorf("PrepareStream wrote byte %d of the output (%#x)", i, v)
		}
	}
	if err := first.PostOn(us.Handle()); err != nil {
		return fmt.Errorf("the first call on the stream after PrepareStream: %w", err)
	}
	if err := cuda.CopyDtoHAsync(us, hout, 0, dst, 0, bytes); err != nil {
		return err
	}
	if err := us.Synchronize(); err != nil {
		return err
	}
	if err := check(0, "read behind the first call on the stream"); err != nil {
		return err
	}
	if err := wait(first); err != nil {
		return err
	}
	if ready, err := first.PrepareStream(); err != nil || !ready {
		return fmt.Errorf("PrepareStream on a set-up team: ready %v, %v", ready, err)
	}
	// Calls 1-3 on the stream, one Coll posted again (UCC's persistent
	// calls) and fresh ones.
	again, err := NewColl(t, a)
	if err != nil {
		return err
	}
	defer again.Finalize()
	for k := 1; k <= 3; k++ {
		c := again
		if k == 2 {
			if c, err = NewColl(t, a); err != nil {
				return err
			}
			defer c.Finalize()
		}
		fill(k)
		if err := cuda.CopyHtoDAsync(us, src, 0, hin, 0, bytes); err != nil {
			return err
		}
		if err := c.PostOn(us.Handle()); err != nil {
			return fmt.Errorf("call %d on the stream: %w", k, err)
		}
		if err := cuda.CopyDtoHAsync(us, hout, 0, dst, 0, bytes); err != nil {
			return err
		}
		if err := us.Synchronize(); err != nil {
			return err
		}
		if err := check(k, "read behind the call on the stream"); err != nil {
			return err
		}
		if err := wait(c); err != nil {
			return err
		}
		if c.Runner() != "node" {
			return fmt.Errorf("call %d ran on %s, not the node kernels", k, c.Runner())
		}
	}
	// A call posted while another is in flight is refused on the stream
	// and runs when posted as usual.
	if err := us.Synchronize(); err != nil {
		return err
	}
	fill(4)
	if err := src.CopyFromHost(0, hin.Bytes()); err != nil {
		return err
	}
	if err := again.Post(); err != nil {
		return err
	}
	later, err := NewColl(t, Args{Coll: coll.Allreduce, Src: a.Dst, Dst: a.Dst, Count: n, Dtype: coll.Float32, Op: coll.Sum, Mem: MemCUDA, InPlace: true})
	if err != nil {
		return err
	}
	defer later.Finalize()
	if err := later.PostOn(us.Handle()); StatusOf(err) != StatusNotSupported {
		return fmt.Errorf("a call on the stream behind one in flight: %v, want it refused", err)
	}
	if err := later.Post(); err != nil {
		return err
	}
	if err := errors.Join(wait(again), wait(later)); err != nil {
		return err
	}
	// later summed call 4's sums in place: size times them.
	if err := dst.CopyToHost(hout.Bytes(), 0); err != nil {
		return err
	}
	b := hout.Bytes()
	for i := range n {
		want := float32(size * (size*(size-1)/2 + size*(i%5+40)))
		if v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])); v != want {
			return fmt.Errorf("in place behind call 4: element %d = %v, want %v", i, v, want)
		}
	}
	fmt.Println("stream calls right")
	awaitExit(dir)
	if err := t.Destroy(); err != nil {
		return err
	}
	return ctx.Close()
}
