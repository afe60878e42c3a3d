package sched

import "fmt"

// How a step is added to a program: the one vocabulary every generator
// writes in.
//
//	id := prog.Send(peer, tag, At(BufDst, off), n, path, deps...)
//	id := prog.Recv(peer, tag, At(BufScratch, off), n, deps...)
//	id := prog.Copy(At(BufSrc, off), At(BufDst, off), n, deps...)
//	id := prog.Reduce(At(BufScratch, off), At(BufDst, off), n, deps...)
//
// Each verb fills a new step where it lies in the program (the set*
// methods at the end) and records its deps as Add does. A generator that
// would rather not work out its own data dependencies writes the same
// verbs on a Hazards over the program (h := NewHazards(prog); h.Send(...)),
// which adds what the bytes need to the deps given.
//
// A dep is the id of an earlier step of the same rank. A negative id
// stands for a step that was not needed (the transfer of an empty piece,
// a round that did not happen) and is skipped, so generators pass "the
// step that made this ready" as they hold it, without checking.

// Add appends s waiting for deps and returns its id. Negative deps are
// skipped (see above), and so is a dep equal to the one before it (two
// readiness conditions met by one step). It panics on a dependency that is
// not an earlier step: that is a generator bug, not user input, and
// programs are acyclic by construction because deps point backwards.
func (p *RankProgram) Add(s Step, deps ...int) int {
	t, id := p.push()
	*t = s
	p.wait(t, id, deps)
	return id
}

// Send appends a send of n bytes at src to peer with tag.
func (p *RankProgram) Send(peer, tag int, src Ref, n int64, path Path, deps ...int) int {
	s, id := p.push()
	s.setSend(peer, tag, src, n, path)
	p.wait(s, id, deps)
	return id
}

// Recv appends a receive of n bytes from peer with tag into dst.
func (p *RankProgram) Recv(peer, tag int, dst Ref, n int64, deps ...int) int {
	s, id := p.push()
	s.setRecv(peer, tag, dst, n)
	p.wait(s, id, deps)
	return id
}

// Copy appends dst = src for n bytes.
func (p *RankProgram) Copy(src, dst Ref, n int64, deps ...int) int {
	s, id := p.push()
	s.setCopy(src, dst, n)
	p.wait(s, id, deps)
	return id
}

// Reduce appends dst = dst OP src for n bytes.
func (p *RankProgram) Reduce(src, dst Ref, n int64, deps ...int) int {
	s, id := p.push()
	s.setReduce(src, dst, n)
	p.wait(s, id, deps)
	return id
}

// push appends a zero step and returns it and its id. The verbs fill the
// step where it lies: building it elsewhere and copying it in costs a
// store-forwarding stall per step, and a 4096-rank plan adds tens of
// millions of steps (the parallel_rings generation benchmarks).
func (p *RankProgram) push() (*Step, int) {
	id := len(p.Steps)
	p.Steps = append(p.Steps, Step{})
	return &p.Steps[id], id
}

// wait records the deps of step s, id, the last step added (see Add for
// which are skipped), straight into the program's pool: no slice per step.
// It is small enough to inline into the verbs.
func (p *RankProgram) wait(s *Step, id int, deps []int) {
	if len(deps) > 0xffff {
		panic("sched: too many dependencies on one step")
	}
	off, last := len(p.deps), -1
	for _, d := range deps {
		if d < 0 || d == last {
			continue
		}
		if d >= id {
			panic(notEarlier{p.Rank, id, d})
		}
		p.deps = append(p.deps, int32(d))
		last = d
	}
	s.depOff, s.depLen = uint32(off), uint16(len(p.deps)-off)
}

// notEarlier is the panic of a step given a dependency that is not an
// earlier step. It is a value rather than a formatted string so that wait
// stays small enough to inline.
type notEarlier struct{ rank, step, dep int }

func (e notEarlier) Error() string {
	return fmt.Sprintf("sched: rank %d step %d depends on step %d, which is not earlier", e.rank, e.step, e.dep)
}

// addParsed appends s with deps exactly as a program file lists them (the
// parser has checked that each is an earlier step), repeats included, so
// that reading a program and writing it back gives the same file.
func (p *RankProgram) addParsed(s Step, deps []int32) {
	s.depOff = uint32(len(p.deps))
	s.depLen = uint16(len(deps))
	p.deps = append(p.deps, deps...)
	p.Steps = append(p.Steps, s)
}

// The fields of each verb's step, shared by RankProgram's and Hazards'
// verbs so the two cannot fill a step differently. s must be zero.

func (s *Step) setSend(peer, tag int, src Ref, n int64, path Path) {
	s.Op, s.Peer, s.Tag, s.SrcBuf, s.SrcOff, s.Len, s.Path = OpSend, int32(peer), int32(tag), src.Buf, src.Off, n, path
}

func (s *Step) setRecv(peer, tag int, dst Ref, n int64) {
	s.Op, s.Peer, s.Tag, s.DstBuf, s.DstOff, s.Len = OpRecv, int32(peer), int32(tag), dst.Buf, dst.Off, n
}

func (s *Step) setCopy(src, dst Ref, n int64) {
	s.Op, s.SrcBuf, s.SrcOff, s.DstBuf, s.DstOff, s.Len = OpCopy, src.Buf, src.Off, dst.Buf, dst.Off, n
}

func (s *Step) setReduce(src, dst Ref, n int64) {
	s.Op, s.SrcBuf, s.SrcOff, s.DstBuf, s.DstOff, s.Len = OpReduce, src.Buf, src.Off, dst.Buf, dst.Off, n
}
