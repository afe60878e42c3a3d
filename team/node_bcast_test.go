package team

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
)

// Bcasts through the team on the node kernels (devsync/plan_bcast.go),
// one process per GPU: every root, sizes from one byte to 8 MiB (odd ones
// too), UCC's one buffer per rank, each call's bytes checked on every
// rank, and an allreduce between rounds, so that calls of different
// kernels follow each other on the same slots. A bcast larger than the
// slots runs on the push engine: its bytes are checked too.
func TestNodeBcastThroughTheTeam(t *testing.T) {
	runNodeChildren(t, "node-bcast", "bcast calls", 120*time.Second)
}

// nodeBcastBig is larger than the test's slots (UCC_TL_GORING_NODE_MAX is
// not set: 64 MiB), so it runs on the push engine.
const nodeBcastBig = 64<<20 + 5

// nodeBcastChild is one rank of TestNodeBcastThroughTheTeam, on GPU
// nodeGPUOf(rank).
func nodeBcastChild(t *Team, ctx *Context, rank, size int, dir string) error {
	d, err := openNodeGPU(rank)
	if err != nil {
		return err
	}
	defer d.Close()
	buf, err := d.Alloc(nodeBcastBig)
	if err != nil {
		return err
	}
	defer func() { _ = buf.Free() }()
	bp := buf.Ptr()
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(&bp))
	// pattern is rank q's bytes of round k: differ by rank, round and
	// place.
	pattern := func(q, k, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(q*31 + k*7 + i%251)
		}
		return b
	}
	run := func(a Args, what string) (string, error) { return runNodeColl(t, a, what) }
	onNode := 0
	k := 0
	for _, bytes := range []int{1, 1001, 1<<20 + 3, 8 << 20, nodeBcastBig} {
		for root := range size {
			k++
			if err := buf.CopyFromHost(0, pattern(rank, k, bytes)); err != nil {
				return err
			}
			what := fmt.Sprintf("bcast %d of %d bytes from root %d", k, bytes, root)
			runner, err := run(Args{Coll: coll.Bcast, Src: ptr, Dst: ptr, Count: uint64(bytes), Dtype: coll.Uint8, Root: root, Mem: MemCUDA}, what)
			if err != nil {
				return err
			}
			if bytes < nodeBcastBig {
				if runner != "node" {
					return fmt.Errorf("%s ran on %s, not the node kernels", what, runner)
				}
				onNode++
			}
			got := make([]byte, bytes)
			if err := buf.CopyToHost(got, 0); err != nil {
				return err
			}
			want := pattern(root, k, bytes)
			for i := range got {
				if got[i] != want[i] {
					return fmt.Errorf("%s (%s): byte %d = %#x, want %#x", what, runner, i, got[i], want[i])
				}
			}
		}
		// An allreduce in place between the rounds: another kernel on
		// the same slots.
		if err := buf.Memset(0, 4096*4, 0); err != nil {
			return err
		}
		if runner, err := run(Args{Coll: coll.Allreduce, Src: ptr, Dst: ptr, Count: 4096, Dtype: coll.Float32, Op: coll.Sum, Mem: MemCUDA, InPlace: true}, "allreduce"); err != nil || runner != "node" {
			return fmt.Errorf("allreduce between bcasts: on %q, %v", runner, err)
		}
	}
	fmt.Printf("bcast calls right: %d, %d on the node kernels\n", k, onNode)
	awaitExit(dir)
	if err := t.Destroy(); err != nil {
		return err
	}
	return ctx.Close()
}

// runNodeColl makes, posts and tests one call of a node test's rank to
// its end, and says which runner ran it.
func runNodeColl(t *Team, a Args, what string) (string, error) {
	c, err := NewColl(t, a)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	defer c.Finalize()
	if err := c.Post(); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	for {
		done, err := c.Test()
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		if done {
			return c.Runner(), nil
		}
		time.Sleep(20 * time.Microsecond)
	}
}
