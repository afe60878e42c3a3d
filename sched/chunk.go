package sched

// Chunking (Spec.Chunks > 1) splits every long transfer into pieces that
// pipeline: each piece is its own send/recv pair with its own tag, and a step
// that forwards or reduces data waits only for the piece it uses, so piece
// c+1 of a block can be on the wire while piece c is forwarded on.
//
// Generators use three helpers so that both ends of a transfer compute the
// same pieces without talking:
//
//	k := ChunkCount(span.Len, spec.Chunks, spec.DtypeBytes) // pieces of this block
//	piece := ChunkSpan(span, k, c, spec.DtypeBytes)          // piece c of it
//	tag := ChunkTag(round, c, spec.Chunks)                   // its tag
//
// Pieces are whole elements (never a split element) and never empty: a block
// of fewer elements than Chunks gets one piece per element.

// ChunkCount is how many pieces a block of n bytes splits into for chunks
// requested pieces (values below 2 mean no chunking) of elem-byte elements:
// min(chunks, n/elem), 1 for a block shorter than one element, 0 for n == 0.
func ChunkCount(n int64, chunks, elem int) int {
	if n <= 0 {
		return 0
	}
	if chunks < 2 {
		return 1
	}
	elems := n / int64(elem)
	if elems < 1 {
		return 1
	}
	if elems < int64(chunks) {
		return int(elems)
	}
	return chunks
}

// ChunkSpan returns piece c of s split into count pieces of whole elements
// (as even as elements allow, as BlockSpan).
func ChunkSpan(s Span, count, c, elem int) Span {
	if count <= 1 {
		return s
	}
	b := BlockSpan(s.Len, count, c, elem)
	return Span{Off: s.Off + b.Off, Len: b.Len}
}

// ChunkTag numbers piece c of a transfer made in round round when transfers
// are split into at most chunks pieces: round*max(chunks,1)+c. Tags only
// need to be unique per (sender, receiver) pair for a readable plan; the
// verifier matches equal tags in step order anyway.
func ChunkTag(round, c, chunks int) int {
	if chunks < 1 {
		chunks = 1
	}
	return round*chunks + c
}

// lockstep remembers, per piece index, the steps that the next round of that
// piece waits for. Rings use it to model MPI_Sendrecv-style rounds: round
// s+1 of piece c starts when both the send and the receive of round s of
// piece c completed. A round that has no piece c keeps the older entry.
type lockstep struct {
	prev [][]int
}

func newLockstep(chunks int) *lockstep {
	if chunks < 1 {
		chunks = 1
	}
	return &lockstep{prev: make([][]int, chunks)}
}

// deps returns the steps piece c waits for.
func (l *lockstep) deps(c int) []int { return l.prev[c] }

// set records the steps of the latest round of piece c.
func (l *lockstep) set(c int, ids ...int) { l.prev[c] = append(l.prev[c][:0:0], ids...) }

// all returns every step recorded, for a final step that waits for all.
func (l *lockstep) all() []int {
	var out []int
	for _, p := range l.prev {
		out = append(out, p...)
	}
	return out
}
