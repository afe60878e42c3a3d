package sched

// Shared helpers for every generator: how a message splits into blocks of
// whole elements, where a block lies, and how tags are numbered. All
// generators (baselines, parallel rings, lane) use these so that a block
// means the same bytes everywhere and verification messages line up.

// Span is the byte range [Off, Off+Len) of a buffer.
type Span struct {
	Off, Len int64
}

// End is the first byte after the span.
func (s Span) End() int64 { return s.Off + s.Len }

// BlockSpan returns block i of n bytes split into parts blocks of whole
// elements of elem bytes each. Blocks are as even as whole elements allow:
// with E = n/elem elements, the first E%parts blocks hold E/parts+1 elements
// and the rest E/parts, so block sizes differ by at most one element and a
// block may be empty when E < parts. n must be a multiple of elem (Generate
// checks that); the last block absorbs any remainder otherwise.
//
// BlockSpan allocates nothing, so a generator for 4096 ranks can ask for any
// block in O(1).
func BlockSpan(n int64, parts, i, elem int) Span {
	e := int64(elem)
	elems := n / e
	q, r := elems/int64(parts), elems%int64(parts)
	ii := int64(i)
	var first int64 // first element of block i
	var cnt int64
	if ii < r {
		first = ii * (q + 1)
		cnt = q + 1
	} else {
		first = r*(q+1) + (ii-r)*q
		cnt = q
	}
	s := Span{Off: first * e, Len: cnt * e}
	if i == parts-1 {
		s.Len = n - s.Off // a non-multiple tail stays with the last block
	}
	return s
}

// MaxBlockLen is the length of the largest block of BlockSpan(n, parts, ., elem),
// which is the size of a scratch slot that can hold any block.
func MaxBlockLen(n int64, parts, elem int) int64 {
	return BlockSpan(n, parts, 0, elem).Len
}

// PrefixSums returns the displacements of packed blocks: out[i] is the sum of
// sizes[0:i], and out[len(sizes)] the total.
func PrefixSums(sizes []int64) []int64 {
	out := make([]int64, len(sizes)+1)
	for i, s := range sizes {
		out[i+1] = out[i] + s
	}
	return out
}

// At returns the Ref of offset off in buffer b.
func At(b Buf, off int64) Ref { return Ref{Buf: b, Off: off} }

// startAllgather starts a flat allgather whose steps Hazards orders
// (bruck, neighbor, recursive_doubling): it sizes the buffers (dst holds
// rank j's block at j*Bytes), copies the rank's own block from src to its
// place in dst, and returns the Hazards to add the rest through.
func startAllgather(spec *Spec, plan *Plan, prog *RankProgram) *Hazards {
	B := spec.Bytes
	prog.Sizes = Sizes{Src: B, Dst: int64(plan.NRanks) * B}
	h := NewHazards(prog)
	h.Copy(At(BufSrc, 0), At(BufDst, int64(prog.Rank)*B), B)
	return h
}

// SetSizes sets the buffer sizes of every rank of the plan to z.
func (p *Plan) SetSizes(z Sizes) {
	for i := range p.Ranks {
		p.Ranks[i].Sizes = z
	}
}

// ceilLog2 is the number of rounds of a doubling algorithm over n ranks.
func ceilLog2(n int) int {
	k := 0
	for (1 << k) < n {
		k++
	}
	return k
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }
