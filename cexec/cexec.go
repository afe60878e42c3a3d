package cexec

/*
#cgo CFLAGS: -O2 -Wall -I${SRCDIR}/../ucx
#include <stdlib.h>
#include "cexec.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// Layout says how a call's two buffer arguments become the program's src
// and dst: UCC's in-place meaning, defined for C once in layout.h
// (GX_LAYOUT_*, gx_layout_place), as the team layer's Go path defines it
// in team/layout.go (place; cpathLayout picks a call's Layout).
type Layout int32

const (
	// Plain: src and dst are the caller's.
	Plain Layout = C.GX_LAYOUT_PLAIN
	// OneBuffer: one buffer is both (bcast): dst, or src when dst is nil.
	OneBuffer Layout = C.GX_LAYOUT_ONE_BUFFER
	// SrcInDst: src is this rank's block of dst (allgather in place).
	SrcInDst Layout = C.GX_LAYOUT_SRC_IN_DST
	// CopyIn: src is a private copy of dst's input, taken at post
	// (allreduce in place; reduce_scatter in place with DstShift).
	CopyIn Layout = C.GX_LAYOUT_COPY_IN
)

// Program is a rank program lowered into C memory.
type Program struct{ p *C.gx_prog_t }

// Lower copies prog into C with exec.BuildGraph's dependency arrays.
// Reduce steps use the (dtype, op) kernel of reduce.c; layout and dstShift
// say how calls map their buffers (see Layout). The program holds one
// reference, the caller's (Release).
func Lower(prog *sched.RankProgram, alg string, dtype coll.Dtype, op coll.Op, layout Layout, dstShift bool) (*Program, error) {
	n := len(prog.Steps)
	g := exec.BuildGraph(prog)
	if n >= 1<<31-1 || len(g.DepList) >= 1<<31-1 {
		return nil, fmt.Errorf("cexec: %d steps is too many for the C executor", n)
	}
	cp := C.gx_prog_new(C.int32_t(n), C.int32_t(len(g.DepList)))
	if cp == nil {
		return nil, errors.New("cexec: out of memory lowering a program")
	}
	p := &Program{p: cp}
	steps := unsafe.Slice(cp.steps, max(n, 1))[:n]
	reduces := false
	for i := range prog.Steps {
		s := &prog.Steps[i]
		if s.Tag < 0 || s.Tag > ucx.MaxTagStep {
			p.Release()
			return nil, fmt.Errorf("cexec: step %d tag %d outside the tag's step field", i, s.Tag)
		}
		steps[i] = C.gx_step_t{src_off: C.int64_t(s.SrcOff), dst_off: C.int64_t(s.DstOff), len: C.int64_t(s.Len),
			peer: C.int32_t(s.Peer), tag: C.uint32_t(s.Tag), op: C.uint8_t(s.Op), src_buf: C.uint8_t(s.SrcBuf), dst_buf: C.uint8_t(s.DstBuf)}
		reduces = reduces || s.Op == sched.OpReduce
	}
	copy(unsafe.Slice((*int32)(unsafe.Pointer(cp.init_pending)), max(n, 1)), g.InitPending)
	copy(unsafe.Slice((*int32)(unsafe.Pointer(cp.dep_off)), n+1), g.DepOff)
	copy(unsafe.Slice((*int32)(unsafe.Pointer(cp.dep_list)), max(len(g.DepList), 1)), g.DepList)
	copy(unsafe.Slice((*int32)(unsafe.Pointer(cp.next_same)), max(n, 1)), g.NextSame)
	cp.nsends, cp.nrecvs = C.int32_t(g.Sends), C.int32_t(g.Recvs)
	cp.size_src, cp.size_dst, cp.size_scratch = C.int64_t(prog.Sizes.Src), C.int64_t(prog.Sizes.Dst), C.int64_t(prog.Sizes.Scratch)
	cp.layout = C.int32_t(layout)
	if dstShift {
		cp.dst_shift = 1
	}
	name := unsafe.Slice((*byte)(unsafe.Pointer(&cp.alg[0])), len(cp.alg))
	copy(name[:len(name)-1], alg)
	if reduces {
		if C.gx_prog_set_reduce(cp, C.int(dtype), C.int(op), C.size_t(dtype.Size())) != 0 {
			p.Release()
			return nil, fmt.Errorf("cexec: no C kernel for %v %v", dtype, op)
		}
	}
	return p, nil
}

// Release drops the caller's reference; the C program lives on while a
// team's cache or a call holds it.
func (p *Program) Release() {
	if p.p != nil {
		C.gx_prog_release(p.p)
		p.p = nil
	}
}

// Key is a call shape as the team layer's C side computes it from a call's
// arguments (collective, datatype and op in goring.h's numbers, in place,
// root, count, algorithm name): Put and the C lookup must agree byte for
// byte, so both zero-fill and copy the name the same way.
type Key struct {
	Coll, Dtype, Op uint8
	InPlace         bool
	Root            uint32
	Count           uint64
	Alg             string
}

// MaxAlgName is the longest algorithm name a Key holds.
const MaxAlgName = 31

func (k Key) c() (C.gx_key_t, error) {
	var ck C.gx_key_t
	if len(k.Alg) > MaxAlgName {
		return ck, fmt.Errorf("cexec: algorithm name %q longer than %d bytes", k.Alg, MaxAlgName)
	}
	ck.count, ck.root = C.uint64_t(k.Count), C.uint32_t(k.Root)
	ck.coll, ck.dtype, ck.op = C.uint8_t(k.Coll), C.uint8_t(k.Dtype), C.uint8_t(k.Op)
	if k.InPlace {
		ck.in_place = 1
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&ck.alg[0])), len(ck.alg)), k.Alg)
	return ck, nil
}

// Team is a team's C side: its worker and endpoints, the sequence number
// shared with Go, and the cache of lowered programs. Its methods other
// than Free and Lock expect the caller to hold the lock when other
// threads may use the team.
type Team struct{ t *C.gx_team_t }

// NewTeam makes the C side of a team of size ranks on worker w, with the
// endpoint to each peer that ep returns (nil: none).
func NewTeam(w *ucx.Worker, rank, size int, ep func(peer int) *ucx.Endpoint) (*Team, error) {
	ct := C.gx_team_new((*C.gr_worker_t)(w.CHandle()), C.int32_t(rank), C.int32_t(size))
	if ct == nil {
		return nil, errors.New("cexec: out of memory for a team")
	}
	for p := 0; p < size; p++ {
		if e := ep(p); e != nil {
			C.gx_team_set_ep(ct, C.int32_t(p), (*C.gr_ep_t)(e.CHandle()))
		}
	}
	return &Team{t: ct}, nil
}

// Ptr is the gx_team_t*, for the team layer's C side.
func (t *Team) Ptr() unsafe.Pointer { return unsafe.Pointer(t.t) }

// SeqCell is the team's last sequence number, in C memory: the Go
// transport draws from it too (ucxmp.Transport.ShareSeq).
func (t *Team) SeqCell() *uint32 { return (*uint32)(unsafe.Pointer(&t.t.seq)) }

// SetGoBusy tells C whether Go has a call on the wire or queued: while it
// has, C must not start calls of its own (their sequence numbers would be
// taken out of post order), and the team layer runs them in Go.
func (t *Team) SetGoBusy(busy bool) {
	v := C.int32_t(0)
	if busy {
		v = 1
	}
	t.t.go_busy = v
}

// GoBusy is what SetGoBusy last said. C only reads the word and Go alone
// writes it, so a caller whose SetGoBusy calls are serialised by a lock
// of its own (the team layer's) reads it under that lock without this
// team's: it is what lets that caller take this team's lock only to
// change the word.
func (t *Team) GoBusy() bool { return t.t.go_busy != 0 }

// Put caches p for k (the cache takes its own reference); false when k is
// cached already.
func (t *Team) Put(k Key, p *Program) (bool, error) {
	ck, err := k.c()
	if err != nil {
		return false, err
	}
	return C.gx_team_put(t.t, &ck, p.p) == 0, nil
}

// Has reports whether k is cached.
func (t *Team) Has(k Key) bool {
	ck, err := k.c()
	return err == nil && C.gx_team_get(t.t, &ck) != nil
}

// CutShort reports whether a call of the team failed or was withdrawn
// in flight (or is live, which Free cancels): its worker may then hold
// messages that no call receives, and must not serve another team.
func (t *Team) CutShort() bool { return t.t.cut != 0 || t.t.live != nil }

// ProgressLive progresses the team's worker and its live C calls once,
// as their tests would, and reports whether any is still live. Caller
// holds the lock: a Go call that must not drive the worker from another
// goroutine while C calls are live (the worker serves one thread at a
// time) progresses them this way until none is.
func (t *Team) ProgressLive() bool { return C.gx_team_progress_live(t.t) != 0 }

// Free cancels the team's live C calls and lets go of the team; the C
// record lives on until its last call is finalized. The caller must not
// hold the lock: Free takes it.
func (t *Team) Free() {
	if t.t != nil {
		C.gx_team_lock(t.t)
		C.gx_team_free(t.t)
		t.t = nil
	}
}

// Lock takes the team's lock, which the C path holds whenever it touches
// the team's worker, cache or calls: Go holds it for the same (its own
// calls progress the same worker), never across a call into C that takes
// it. A spin lock: held for microseconds.
func (t *Team) Lock() { C.gx_team_lock(t.t) }

// Unlock releases the lock Lock took.
func (t *Team) Unlock() { C.gx_team_unlock(t.t) }

// Shared is a context's shared worker as C sees it (gx_shared_t): the
// worker the context path's teams post on, their endpoints by context
// rank, and their programs by member list, rank and shape. Go owns the
// worker and the endpoints; C the programs.
type Shared struct{ s *C.gx_shared_t }

// SharedMaxSize is the largest team the shared worker's tags name, and
// SharedSteps bounds a step tag there (gx_shared_tags).
const (
	SharedMaxSize = C.GX_SHARED_MAX_SIZE
	SharedSteps   = C.GX_SHARED_STEPS
)

// NewShared makes the C record of worker w.
func NewShared(w *ucx.Worker) (*Shared, error) {
	s := C.gx_shared_new((*C.gr_worker_t)(w.CHandle()))
	if s == nil {
		return nil, errors.New("cexec: out of memory for a shared worker")
	}
	return &Shared{s: s}, nil
}

// Ptr is the gx_shared_t*, for the team layer's C side.
func (s *Shared) Ptr() unsafe.Pointer { return unsafe.Pointer(s.s) }

// Lock takes the shared worker's lock, held by C whenever it touches the
// worker, the endpoints or the cache, and by Go around its own use of
// the worker (connecting endpoints). A spin lock: held for microseconds.
func (s *Shared) Lock() { C.gx_lock(&s.s.lock) }

// Unlock releases the lock Lock took.
func (s *Shared) Unlock() { C.gx_unlock(&s.s.lock) }

// SetEndpoint lists ep as the endpoint to context rank r. Lock held.
func (s *Shared) SetEndpoint(r uint32, ep *ucx.Endpoint) error {
	if C.gx_shared_set_ep(s.s, C.uint32_t(r), (*C.gr_ep_t)(ep.CHandle())) != 0 {
		return errors.New("cexec: out of memory listing an endpoint")
	}
	return nil
}

// Free lets go of the record (the teams still on it keep it) before Go
// closes the worker: no team may post or progress on it after. Without
// the lock: Free takes it.
func (s *Shared) Free() {
	if s.s != nil {
		C.gx_shared_free(s.s)
		s.s = nil
	}
}

// MaxStepTag is the largest step tag of prog (-1 for no steps).
func MaxStepTag(prog *sched.RankProgram) int32 {
	m := int32(-1)
	for i := range prog.Steps {
		m = max(m, prog.Steps[i].Tag)
	}
	return m
}

// Take hands the caller's reference to C: the gx_prog_t*, which C
// releases (gx_prog_release); p is empty after.
func (p *Program) Take() unsafe.Pointer {
	c := p.p
	p.p = nil
	return unsafe.Pointer(c)
}

// NewSharedTeam makes a team on the shared worker s: rank of size, whose
// members are the context ranks ranks (their endpoints listed on s), its
// tags naming it by UCC's key (gx_shared_tags). Its calls take s's lock.
func NewSharedTeam(s *Shared, rank, size int, ranks []uint32, key uint32) (*Team, error) {
	if len(ranks) != size || size < 1 {
		return nil, fmt.Errorf("cexec: %d member ranks for a team of %d", len(ranks), size)
	}
	var tags C.gx_tags_t
	if C.gx_shared_tags(C.uint32_t(key), C.int32_t(size), &tags) != 0 {
		return nil, fmt.Errorf("cexec: team key %#x or size %d does not fit the shared worker's tags", key, size)
	}
	cr := C.malloc(C.size_t(4 * size))
	defer C.free(cr)
	copy(unsafe.Slice((*uint32)(cr), size), ranks)
	s.Lock()
	ct := C.gx_team_new_shared(s.s, C.int32_t(rank), C.int32_t(size), (*C.uint32_t)(cr), &tags)
	s.Unlock()
	if ct == nil {
		return nil, errors.New("cexec: a member has no endpoint on the shared worker")
	}
	return &Team{t: ct}, nil
}
