package sched

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
)

// LaneProgram turns rank's program of a lane's plan (the collective over
// one coll.LanePart, plan.Bytes == part.Len) into a program over the
// caller's whole buffers, so that every lane of a rank addresses the same
// Src and Dst and no lane needs buffers of its own (Multi-lane, §3).
//
// For allreduce and bcast the lane's vector is the contiguous range at
// part.Off: offsets shift. For allgather (Dst) and reduce_scatter (Src)
// the lane's N blocks of part.Len bytes lie bytes apart in the caller's
// buffer, at part.Off within each block. When every step's range in that
// buffer stays inside one block, the offsets map straight onto the
// caller's (no extra copy: a ring's steps are whole blocks or pieces of
// one). When a step spans blocks (recursive doubling and Bruck send runs of
// blocks in one message, which a strided buffer cannot hold), the lane
// buffer is staged in scratch instead: allgather copies each block out at
// the end, reduce_scatter copies each block in at the start, each copy
// waiting only for the steps that touch its block.
//
// bytes is the collective's per-rank count (UCC's meaning) of the whole
// call. Alltoallv has no lane split (coll.CheckLanes).
func LaneProgram(plan *Plan, rank int, part coll.LanePart, bytes int64) (*RankProgram, error) {
	if plan.Bytes != part.Len {
		return nil, fmt.Errorf("sched: lane plan of %d bytes for a %d-byte part", plan.Bytes, part.Len)
	}
	if part.Len <= 0 || part.Off < 0 || part.Off+part.Len > bytes {
		return nil, fmt.Errorf("sched: lane part [%d,%d) empty or outside %d bytes (an empty lane runs nothing)", part.Off, part.Off+part.Len, bytes)
	}
	src := &plan.Ranks[rank]
	n := int64(plan.NRanks)
	lm := laneMap{part: part, bytes: bytes}
	var strided Buf // the buffer of N blocks, if any
	switch plan.Collective {
	case coll.Allreduce, coll.Bcast:
	case coll.Allgather:
		strided = BufDst
	case coll.ReduceScatter:
		strided = BufSrc
	default:
		return nil, fmt.Errorf("sched: %s does not run on lanes", plan.Collective)
	}
	out := &RankProgram{Rank: src.Rank, Node: src.Node, Local: src.Local, Sizes: src.Sizes}
	for _, b := range []Buf{BufSrc, BufDst} {
		if sz := src.Sizes.Of(b); sz > 0 {
			out.setSize(b, sz/part.Len*bytes) // the caller's size: 1 or N blocks of bytes
		}
	}
	if strided == 0 || lm.blockwise(src, strided) {
		lm.strided = strided
		for id := range src.Steps {
			s := src.Steps[id]
			lm.mapStep(&s)
			out.Add(s, depsOf(src, id, 0)...)
		}
		return out, nil
	}
	// Staged: the lane's N blocks live in scratch after the plan's own.
	lm.staged, lm.stageOff = strided, src.Sizes.Scratch
	out.Sizes.Scratch += n * part.Len
	shift := 0
	if strided == BufSrc {
		// reduce_scatter: copy each block in before anything reads it.
		for r := int64(0); r < n; r++ {
			out.Copy(At(BufSrc, r*bytes+part.Off), At(BufScratch, lm.stageOff+r*part.Len), part.Len)
		}
		shift = int(n)
	}
	for id := range src.Steps {
		s := src.Steps[id]
		deps := depsOf(src, id, shift)
		if strided == BufSrc && s.readsBuf() && s.SrcBuf == BufSrc {
			deps = append(deps, lm.blocksOf(s.SrcOff, s.Len)...) // copy-in r has id r
		}
		lm.mapStep(&s)
		out.Add(s, deps...)
	}
	if strided == BufDst {
		// allgather: copy each block out once every step writing it is done.
		writers := make([][]int, n)
		for id := range src.Steps {
			s := &src.Steps[id]
			if s.writesBuf() && s.DstBuf == BufDst {
				for _, r := range lm.blocksOf(s.DstOff, s.Len) {
					writers[r] = append(writers[r], id)
				}
			}
		}
		for r := int64(0); r < n; r++ {
			if len(writers[r]) > 0xffff {
				return nil, fmt.Errorf("sched: lane block %d has %d writers, more than a step can wait for", r, len(writers[r]))
			}
			out.Copy(At(BufScratch, lm.stageOff+r*part.Len), At(BufDst, r*bytes+part.Off), part.Len, writers[r]...)
		}
	}
	return out, nil
}

// laneMap maps a lane program's buffer offsets onto the caller's buffers.
type laneMap struct {
	part     coll.LanePart
	bytes    int64
	strided  Buf   // mapped block by block onto the caller's buffer
	staged   Buf   // redirected to scratch at stageOff
	stageOff int64 // where the staged lane buffer starts in scratch
}

// blockwise reports whether every range of prog in buffer b stays inside
// one lane block.
func (lm *laneMap) blockwise(prog *RankProgram, b Buf) bool {
	for id := range prog.Steps {
		s := &prog.Steps[id]
		if s.readsBuf() && s.SrcBuf == b && len(lm.blocksOf(s.SrcOff, s.Len)) > 1 {
			return false
		}
		if s.writesBuf() && s.DstBuf == b && len(lm.blocksOf(s.DstOff, s.Len)) > 1 {
			return false
		}
	}
	return true
}

// blocksOf lists the lane blocks [off, off+n) touches.
func (lm *laneMap) blocksOf(off, n int64) []int {
	b := lm.part.Len
	if n <= 0 || b <= 0 {
		return nil
	}
	var out []int
	for r := off / b; r <= (off+n-1)/b; r++ {
		out = append(out, int(r))
	}
	return out
}

// ref maps one reference.
func (lm *laneMap) ref(buf Buf, off int64) (Buf, int64) {
	switch {
	case buf == BufScratch || buf == 0:
		return buf, off
	case buf == lm.staged:
		return BufScratch, lm.stageOff + off
	case buf == lm.strided:
		b := lm.part.Len
		return buf, off/b*lm.bytes + lm.part.Off + off%b
	}
	return buf, lm.part.Off + off // the contiguous side
}

// mapStep maps the buffer references a step uses.
func (lm *laneMap) mapStep(s *Step) {
	if s.readsBuf() {
		s.SrcBuf, s.SrcOff = lm.ref(s.SrcBuf, s.SrcOff)
	}
	if s.writesBuf() {
		s.DstBuf, s.DstOff = lm.ref(s.DstBuf, s.DstOff)
	}
}

// readsBuf and writesBuf say which side of a step names a buffer.
func (s *Step) readsBuf() bool  { return s.Op == OpSend || s.Op == OpCopy || s.Op == OpReduce }
func (s *Step) writesBuf() bool { return s.Op == OpRecv || s.Op == OpCopy || s.Op == OpReduce }

// depsOf is step id's deps in prog, shifted by shift ids.
func depsOf(prog *RankProgram, id, shift int) []int {
	ds := prog.Deps(id)
	out := make([]int, len(ds))
	for i, d := range ds {
		out[i] = int(d) + shift
	}
	return out
}

// setSize sets buffer b's size.
func (p *RankProgram) setSize(b Buf, n int64) {
	switch b {
	case BufSrc:
		p.Sizes.Src = n
	case BufDst:
		p.Sizes.Dst = n
	case BufScratch:
		p.Sizes.Scratch = n
	}
}
