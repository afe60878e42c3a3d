package cuda

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
)

// The node collectives: kernels/node.cu, one kernel per rank per call,
// the ranks synchronising each other through flag words in their scratch
// regions (package devsync's protocol and plans). Launching them is all
// this file does: the scratch regions, their mapping to every peer, the
// epochs and the abort word are the caller's.

// NodeMaxRanks is the most ranks a node call takes (shim.h's
// GC_NODE_MAX_RANKS, devsync.MaxRanks).
const NodeMaxRanks = C.GC_NODE_MAX_RANKS

// nodeAlgs are the algorithms node.cu has kernels for, and their names there.
var nodeAlgs = map[devsync.Algorithm]string{
	devsync.OneShotAllreduce: "oneshot",
	devsync.TwoShotAllreduce: "twoshot",
	devsync.ReduceScatter:    "reduce_scatter",
	devsync.Allgather:        "allgather",
	devsync.Bcast:            "bcast",
	// devsync/ll.go's tagged lines
	devsync.LLOneShotAllreduce: "ll_oneshot",
	devsync.LLReduceScatter:    "ll_reduce_scatter",
	devsync.LLAllgather:        "ll_allgather",
}

// nodeModule is a device's loaded node kernels.
type nodeModule struct {
	mod C.gc_module
	fns map[devsync.Algorithm]*[coll.Float64 + 1][coll.Bxor + 1]C.gc_function
	// bytes are the kernels that move bytes (allgather, bcast).
	bytes map[devsync.Algorithm]C.gc_function
}

func (d *Device) loadNodeKernels() (*nodeModule, error) {
	ctx, rm, err := d.loadModule("node") // rm: moduleFunction's handle on the module
	if err != nil {
		return nil, err
	}
	name := rm.image
	m := &nodeModule{mod: rm.mod, fns: map[devsync.Algorithm]*[coll.Float64 + 1][coll.Bxor + 1]C.gc_function{},
		bytes: map[devsync.Algorithm]C.gc_function{}}
	for alg, an := range nodeAlgs {
		if !alg.Reduces() {
			var f C.gc_function
			if err := moduleFunction(ctx, rm, &f, "goring_node_"+an, name); err != nil {
				return nil, err
			}
			m.bytes[alg] = f
			continue
		}
		m.fns[alg] = new([coll.Float64 + 1][coll.Bxor + 1]C.gc_function)
		for _, dt := range coll.Dtypes {
			for _, op := range coll.Ops {
				if coll.Supports(op, dt) {
					// Through a local: cgo's pointer check covers
					// the allocation behind the pointer, and m holds
					// a Go map.
					var f C.gc_function
					if err := moduleFunction(ctx, rm, &f, "goring_node_"+an+"_"+dt.String()+"_"+op.String(), name); err != nil {
						return nil, err
					}
					m.fns[alg][dt][op] = f
				}
			}
		}
	}
	return m, nil
}

// NodeCall is one rank's part of one node collective.
type NodeCall struct {
	Alg devsync.Algorithm
	// Dtype and Op of a reduction (Allgather and Bcast move bytes:
	// ignored).
	Dtype coll.Dtype
	Op    coll.Op
	// Scratch is every rank's scratch region, as this rank's device
	// addresses them (its own, and its peers' mapped by peer access or
	// IPC), at least devsync.ScratchBytes(SlotBytes) long, its first
	// devsync.ZeroedBytes (flags, LL area) zeroed before the team's
	// first call.
	Scratch []DevicePtr
	Rank    int
	// In and Out may start at any byte: a rank whose buffers are not
	// aligned to the element must run the call like its peers
	// (team/aligned.go), and the kernels read and write such elements
	// byte by byte.
	In, Out DevicePtr
	// Count is devsync.Shape.Count: elements of Dtype (Allgather and
	// Bcast: bytes).
	Count int
	// Root is a bcast's root rank.
	Root int
	// Stride is devsync.Shape.Stride: a reduce_scatter's elements between
	// input blocks (0: Count).
	Stride int
	// SlotBytes is devsync.Shape.SlotBytes for the call's shape; every
	// call of a team on the same regions must use the same value.
	SlotBytes int
	// Epoch: the team's call number, one more per call (devsync.Epoch).
	Epoch devsync.Epoch
	// Abort is the device address of the host-mapped abort word (0: no
	// abort); Status, of a host-mapped word the kernel sets to Epoch when
	// the abort word stopped it (0: none).
	Abort, Status DevicePtr
	// Done is the device address of host-mapped done words, one per CTA
	// (devsync.DoneBytes, 8-byte aligned): CTA b releases Epoch into word
	// b when it ends, call completed or aborted (devsync.Ended). 0: none.
	Done DevicePtr
	// Ring, where not 0, makes the kernel resident (devsync/resident.go):
	// the device address of the team's ring in host-mapped memory
	// (devsync.RingBytes), from which it takes the team's next calls for
	// up to Linger ns after each. Mailbox is devsync.MailboxBytes of
	// device memory its CTAs pass those calls through. Both need Done.
	Ring, Mailbox DevicePtr
	Linger        uint64
}

// NodeGrid is a launch's shape: Blocks CTAs (the same on every rank, at
// most devsync.MaxBlocks) of Threads threads.
type NodeGrid struct{ Blocks, Threads int }

// DefaultNodeGrid picks a grid for a call of a message of bytes (an
// allreduce's vector, a reduce_scatter's input, an allgather's output):
// 512 threads, and CTAs from two TestNodeBench sweeps on 4 H100s over
// NVSwitch (2026-11-28, the kernels with 8 vectors in flight per thread),
// weighted to two-shot allreduce and reduce_scatter: 4 up to 16 KiB, 16
// up to 1 MiB, 32 up to 4 MiB, 64 up to 64 MiB, 128 beyond. Between 4
// and 128 CTAs the large sizes differ by a few percent at most (two-shot
// at 64 MiB: 373 us with 64); more CTAs put more loads in flight over
// NVLink, but each CTA signals and waits on its own flags, which costs
// at small sizes.
func DefaultNodeGrid(bytes int) NodeGrid {
	g := NodeGrid{Blocks: 128, Threads: 512}
	switch {
	case bytes <= 16<<10:
		g.Blocks = 4
	case bytes <= 1<<20:
		g.Blocks = 16
	case bytes <= 4<<20:
		g.Blocks = 32
	case bytes <= 64<<20:
		g.Blocks = 64
	}
	return g
}

// CheckNodeCall checks call c on grid g as NodeLaunchAsync does before it
// launches, and returns its devsync shape (the kernel's stride is its
// BlockStride): what a call handed to a resident kernel must pass too.
func CheckNodeCall(c NodeCall, g NodeGrid) (devsync.Shape, error) {
	n := len(c.Scratch)
	switch {
	case n < 1 || n > devsync.MaxRanks:
		return devsync.Shape{}, fmt.Errorf("cuda: node call of %d ranks (1 to %d)", n, devsync.MaxRanks)
	case c.Rank < 0 || c.Rank >= n:
		return devsync.Shape{}, fmt.Errorf("cuda: node call: rank %d of %d", c.Rank, n)
	case g.Blocks < 1 || g.Blocks > devsync.MaxBlocks || g.Threads < 32 || g.Threads > 1024 || g.Threads < n:
		return devsync.Shape{}, fmt.Errorf("cuda: node grid %d blocks of %d threads (1 to %d blocks, 32 to 1024 threads)", g.Blocks, g.Threads, devsync.MaxBlocks)
	case c.Count < 0 || c.SlotBytes%devsync.Align != 0:
		return devsync.Shape{}, fmt.Errorf("cuda: node call: count %d, slot of %d bytes (a multiple of %d)", c.Count, c.SlotBytes, devsync.Align)
	case c.Epoch < devsync.FirstEpoch:
		return devsync.Shape{}, fmt.Errorf("cuda: node call: epoch %d (the first is %d)", c.Epoch, devsync.FirstEpoch)
	}
	size := 1
	if c.Alg.Reduces() {
		if !coll.Supports(c.Op, c.Dtype) {
			return devsync.Shape{}, fmt.Errorf("cuda: node %v: %v is not defined on %v", c.Alg, c.Op, c.Dtype)
		}
		size = c.Dtype.Size()
	}
	// The kernel stores into every rank's slot by the plan's layout: a
	// slot too small would be overrun, not refused, on the device.
	sh := devsync.Shape{Alg: c.Alg, Ranks: n, Blocks: g.Blocks, Count: c.Count, ElemSize: size, Stride: c.Stride, Root: c.Root}
	if err := sh.Validate(); err != nil {
		return sh, fmt.Errorf("cuda: node call: %w", err)
	}
	if need := sh.SlotBytes(); need > c.SlotBytes {
		return sh, fmt.Errorf("cuda: node %v of %d elements on %d ranks needs slots of %d bytes, not %d", c.Alg, c.Count, n, need, c.SlotBytes)
	}
	for q, p := range c.Scratch {
		if uintptr(p)%devsync.Align != 0 {
			return sh, fmt.Errorf("cuda: node call: scratch region %d at %#x is not %d-byte aligned", q, p, devsync.Align)
		}
	}
	if c.Done%8 != 0 {
		return sh, fmt.Errorf("cuda: node call: done words at %#x are not 8-byte aligned", c.Done)
	}
	if c.Ring != 0 && (c.Done == 0 || c.Mailbox == 0 || c.Ring%8 != 0 || c.Mailbox%8 != 0) {
		return sh, fmt.Errorf("cuda: node call: a resident kernel needs done words and an 8-byte aligned ring and mailbox (ring %#x, mailbox %#x, done %#x)", c.Ring, c.Mailbox, c.Done)
	}
	return sh, nil
}

// NodeLaunchAsync queues this rank's kernel of call c on s (s's device
// must be the rank's). It returns at once; the kernel ends when every
// rank's kernel of the call has signalled it (or the abort word is set).
func NodeLaunchAsync(s *Stream, c NodeCall, g NodeGrid) error {
	sh, err := CheckNodeCall(c, g)
	if err != nil {
		return err
	}
	m, err := s.dev.nodeKernels()
	if err != nil {
		return err
	}
	f, ok := m.bytes[c.Alg]
	if c.Alg.Reduces() {
		var fns *[coll.Float64 + 1][coll.Bxor + 1]C.gc_function
		if fns, ok = m.fns[c.Alg]; !ok {
			return fmt.Errorf("cuda: no node kernel for %v", c.Alg)
		}
		f = fns[c.Dtype][c.Op]
	} else if !ok {
		return fmt.Errorf("cuda: no node kernel for %v", c.Alg)
	}
	var a C.gc_node_args
	for q, p := range c.Scratch {
		a.peer[q] = C.ulonglong(p)
	}
	a.in, a.out = C.ulonglong(c.In), C.ulonglong(c.Out)
	a.abort_word, a.status, a.done = C.ulonglong(c.Abort), C.ulonglong(c.Status), C.ulonglong(c.Done)
	a.epoch, a.count, a.slot_bytes = C.ulonglong(c.Epoch), C.ulonglong(c.Count), C.ulonglong(c.SlotBytes)
	a.stride = C.ulonglong(sh.BlockStride())
	a.ring, a.mailbox, a.linger = C.ulonglong(c.Ring), C.ulonglong(c.Mailbox), C.ulonglong(c.Linger)
	a.rank, a.nranks, a.root = C.uint(c.Rank), C.uint(len(c.Scratch)), C.uint(c.Root)
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	if r := C.gc_launch_node(ctx, f, C.uint(g.Blocks), C.uint(g.Threads), cs, &a); r != 0 {
		return check("cuLaunchKernel(goring_node_"+nodeAlgs[c.Alg]+")", r) // named only on failure: a launch per call
	}
	return nil
}
