package sched

import "slices"

// Emission of one rank's dispatch or combine program from a moePlan.
// Steps are written through Hazards, so each waits for exactly the steps
// whose bytes it needs: a relay forwards a piece as soon as the pieces
// holding its rows have arrived, and a sum adds a row once both rows are
// there.

// rowOps merges one-row copies (or reductions) whose source and
// destination rows both continue the previous ones into one step.
type rowOps struct {
	h        *Hazards
	op       StepOp
	rowBytes int64
	src, dst Ref
	rows     int64
}

func (o *rowOps) add(src, dst Ref) {
	if o.rows > 0 && src.Buf == o.src.Buf && dst.Buf == o.dst.Buf &&
		src.Off == o.src.Off+o.rows*o.rowBytes && dst.Off == o.dst.Off+o.rows*o.rowBytes {
		o.rows++
		return
	}
	o.flush()
	o.src, o.dst, o.rows = src, dst, 1
}

func (o *rowOps) flush() {
	if o.rows == 0 {
		return
	}
	if o.op == OpReduce {
		o.h.Reduce(o.src, o.dst, o.rows*o.rowBytes)
	} else {
		o.h.Copy(o.src, o.dst, o.rows*o.rowBytes)
	}
	o.rows = 0
}

func rowRef(r Ref, row int, rowBytes int64) Ref { return At(r.Buf, r.Off+int64(row)*rowBytes) }

// rowsFollow reports whether refs are consecutive rows of one buffer.
func rowsFollow(refs []Ref, rowBytes int64) bool {
	for i := 1; i < len(refs); i++ {
		if refs[i].Buf != refs[0].Buf || refs[i].Off != refs[0].Off+int64(i)*rowBytes {
			return false
		}
	}
	return len(refs) > 0
}

// directRow reports whether leg l can be received straight into its
// receiver's dispatch dst (and sent back from its combine src): it
// delivers, forwards nothing, and each of its tokens picked exactly one
// expert of the receiver, at consecutive rows. It returns the first row.
func (mp *moePlan) directRow(l int) (int, bool) {
	g := &mp.legs[l]
	if !g.Deliver || len(mp.kids[l]) > 0 {
		return 0, false
	}
	var slots []int
	first := 0
	for i, t := range g.Tokens {
		slots = mp.lay.SlotsOn(int(t), g.To, slots[:0])
		if len(slots) != 1 {
			return 0, false
		}
		row := mp.lay.Row[slots[0]]
		if i == 0 {
			first = row
		} else if row != first+i {
			return 0, false
		}
	}
	return first, true
}

// emitDispatch writes rank prog.Rank's dispatch program: its tokens to its
// own experts, its first hops, the legs it receives, their delivery to
// its experts, and the legs it forwards.
func (mp *moePlan) emitDispatch(spec *Spec, prog *RankProgram) {
	lay, r, H := mp.lay, prog.Rank, spec.Routing.TokenBytes
	prog.Sizes = Sizes{Src: int64(lay.R.Tokens[r]) * H, Dst: int64(lay.RecvRows[r]) * H}
	recvAt := map[int]Ref{}
	direct := map[int]bool{}
	var scratch int64
	for _, l := range mp.to[r] {
		if row, ok := mp.directRow(l); ok {
			recvAt[l], direct[l] = At(BufDst, int64(row)*H), true
			continue
		}
		recvAt[l] = At(BufScratch, scratch)
		scratch += int64(len(mp.legs[l].Tokens)) * H
	}
	// source returns where row i of leg l lies on its sender (this rank).
	source := func(l, i int) Ref {
		g := &mp.legs[l]
		if g.Parent < 0 {
			return At(BufSrc, int64(int(g.Tokens[i])-lay.Base[r])*H)
		}
		return rowRef(recvAt[g.Parent], mp.index(g.Parent, g.Tokens[i]), H)
	}
	sendAt := map[int]Ref{}
	staged := map[int]bool{}
	var refs []Ref
	for _, l := range mp.from[r] {
		refs = refs[:0]
		for i := range mp.legs[l].Tokens {
			refs = append(refs, source(l, i))
		}
		if rowsFollow(refs, H) {
			sendAt[l] = refs[0]
			continue
		}
		sendAt[l], staged[l] = At(BufScratch, scratch), true
		scratch += int64(len(refs)) * H
	}
	prog.Sizes.Scratch = scratch
	h := NewHazards(prog)
	ops := &rowOps{h: h, op: OpCopy, rowBytes: H}
	var slots []int
	for g := lay.Base[r]; g < lay.Base[r+1]; g++ {
		for _, s := range lay.SlotsOn(g, r, slots[:0]) {
			ops.add(At(BufSrc, int64(g-lay.Base[r])*H), At(BufDst, int64(lay.Row[s])*H))
		}
	}
	ops.flush()
	send := func(l int) {
		for c := 0; c < mp.pieces(l); c++ {
			a, b := mp.piece(l, c)
			if staged[l] {
				for i := a; i < b; i++ {
					ops.add(source(l, i), rowRef(sendAt[l], i, H))
				}
				ops.flush()
			}
			h.Send(mp.legs[l].To, mp.tag(l, c), rowRef(sendAt[l], a, H), int64(b-a)*H, Path{})
		}
	}
	for _, l := range mp.from[r] {
		if mp.legs[l].Parent < 0 {
			send(l)
		}
	}
	for _, l := range mp.to[r] {
		for c := 0; c < mp.pieces(l); c++ {
			a, b := mp.piece(l, c)
			h.Recv(mp.legs[l].From, mp.tag(l, c), rowRef(recvAt[l], a, H), int64(b-a)*H)
		}
	}
	for _, l := range mp.to[r] {
		if !mp.legs[l].Deliver || direct[l] {
			continue
		}
		for i, g := range mp.legs[l].Tokens {
			for _, s := range lay.SlotsOn(int(g), r, slots[:0]) {
				ops.add(rowRef(recvAt[l], i, H), At(BufDst, int64(lay.Row[s])*H))
			}
		}
		ops.flush()
	}
	for _, l := range mp.from[r] {
		if mp.legs[l].Parent >= 0 {
			send(l)
		}
	}
}

// emitCombine writes rank prog.Rank's combine program, the dispatch legs
// reversed: it receives the sums of the legs it sent, sends back for each
// leg it received the sum of that leg's subtree (its own experts' rows of
// the token in slot order, then its forwarded legs' sums in leg order),
// and as an owner sums each token's rows (its own experts' in slot order,
// then its first hops' in leg order). The order is fixed by the plan, so
// a plan gives the same bits on every run.
func (mp *moePlan) emitCombine(spec *Spec, prog *RankProgram) {
	lay, r, H := mp.lay, prog.Rank, spec.Routing.TokenBytes
	prog.Sizes = Sizes{Src: int64(lay.RecvRows[r]) * H, Dst: int64(lay.R.Tokens[r]) * H}
	var scratch int64
	back := map[int]Ref{}
	for _, l := range mp.from[r] {
		back[l] = At(BufScratch, scratch)
		scratch += int64(len(mp.legs[l].Tokens)) * H
	}
	var slots []int
	// parts appends the rows whose sum leg l carries back for token g.
	parts := func(l int, g int32, out []Ref) []Ref {
		if mp.legs[l].Deliver {
			slots = lay.SlotsOn(int(g), r, slots[:0])
			for _, s := range slots {
				out = append(out, At(BufSrc, int64(lay.Row[s])*H))
			}
		}
		for _, k := range mp.kids[l] {
			if i, ok := slices.BinarySearch(mp.legs[k].Tokens, g); ok {
				out = append(out, rowRef(back[k], i, H))
			}
		}
		return out
	}
	outAt := map[int]Ref{}
	staged := map[int]bool{}
	var refs, one []Ref
	for _, l := range mp.to[r] {
		refs = refs[:0]
		single := true
		for _, g := range mp.legs[l].Tokens {
			one = parts(l, g, one[:0])
			single = single && len(one) == 1
			if single {
				refs = append(refs, one[0])
			}
		}
		if single && rowsFollow(refs, H) {
			outAt[l] = refs[0]
			continue
		}
		outAt[l], staged[l] = At(BufScratch, scratch), true
		scratch += int64(len(mp.legs[l].Tokens)) * H
	}
	prog.Sizes.Scratch = scratch
	h := NewHazards(prog)
	sum := &rowSums{ops: rowOps{h: h, rowBytes: H}}
	for _, l := range mp.from[r] {
		for c := 0; c < mp.pieces(l); c++ {
			a, b := mp.piece(l, c)
			h.Recv(mp.legs[l].To, mp.tag(l, c), rowRef(back[l], a, H), int64(b-a)*H)
		}
	}
	for _, l := range mp.to[r] {
		for c := 0; c < mp.pieces(l); c++ {
			a, b := mp.piece(l, c)
			if staged[l] {
				sum.reset()
				for i := a; i < b; i++ {
					sum.row(parts(l, mp.legs[l].Tokens[i], sum.next()), rowRef(outAt[l], i, H))
				}
				sum.emit()
			}
			h.Send(mp.legs[l].From, mp.tag(l, c), rowRef(outAt[l], a, H), int64(b-a)*H, Path{})
		}
	}
	sum.reset()
	for g := lay.Base[r]; g < lay.Base[r+1]; g++ {
		in := sum.next()
		for _, s := range lay.SlotsOn(g, r, slots[:0]) {
			in = append(in, At(BufSrc, int64(lay.Row[s])*H))
		}
		for _, l := range mp.from[r] {
			if mp.legs[l].Parent >= 0 {
				continue
			}
			if i, ok := slices.BinarySearch(mp.legs[l].Tokens, int32(g)); ok {
				in = append(in, rowRef(back[l], i, H))
			}
		}
		sum.row(in, At(BufDst, int64(g-lay.Base[r])*H))
	}
	sum.emit()
}

// rowSums collects rows to sum (each a destination and its parts in
// order) and emits them phase by phase: the first part of every row
// copied, then the second reduced in, and so on, so runs of rows merge
// into one step per phase while each row's order stays its own.
type rowSums struct {
	ops   rowOps
	parts [][]Ref
	dst   []Ref
	n     int
}

func (s *rowSums) reset() { s.n = 0 }

// next returns an empty slice to append the next row's parts to.
func (s *rowSums) next() []Ref {
	if s.n < len(s.parts) {
		return s.parts[s.n][:0]
	}
	return nil
}

func (s *rowSums) row(parts []Ref, dst Ref) {
	if s.n < len(s.parts) {
		s.parts[s.n], s.dst[s.n] = parts, dst
	} else {
		s.parts, s.dst = append(s.parts, parts), append(s.dst, dst)
	}
	s.n++
}

func (s *rowSums) emit() {
	for phase := 0; ; phase++ {
		any := false
		s.ops.op = OpCopy
		if phase > 0 {
			s.ops.op = OpReduce
		}
		for i := 0; i < s.n; i++ {
			if phase < len(s.parts[i]) {
				any = true
				s.ops.add(s.parts[i][phase], s.dst[i])
			}
		}
		s.ops.flush()
		if !any {
			return
		}
	}
}
