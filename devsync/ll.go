package devsync

import "fmt"

// The LL protocol (low latency): for small calls, the wait for a flag
// and the fence before it cost more than the data. A writer instead
// stores its data into the reader's LL area in 16-byte lines, each line
// two 8-byte words of 4 data bytes and the call's tag (LLTag); an
// aligned 8-byte store is single-copy atomic (PTX memory model), so a
// reader that loads a word holding the tag holds that word's data too.
// A reader polls each line until both its words hold the tag: no flags,
// no fences, one crossing of NVLink.
//
// Area. Every rank's scratch region has an LL area of two parities
// (LLAreaBytes each) after the flag area; a call of epoch e uses parity
// e&1, where rank p's lines for rank q go to region p of q's area
// (LLRegionBytes of payload each, twice that of lines).
//
// Reuse. A rank writes parity e&1 of a peer's area again at call e+2.
// It begins that call only after its call e+1 ended (nodeexec begins a
// call once the last one's done words are in), and call e+1 ended only
// once every block had the peer's lines (or flags) of e+1, which the
// peer sends only after it ended call e, reads of the area included. An
// LL call of no elements would end without a byte of its peers, so LL
// shapes have a count.
//
// Tags. A line left by an earlier call must never hold this call's tag:
// the area holds lines only (never a slot's data, which could be any
// bits), tags are never 0 (the state of a cleared area), and two epochs
// share a tag only LLTagPeriod apart, which the host's clears
// (LLClearBefore) rule out.

// LLAreaBytes is one parity of a rank's LL area: the lines of every
// source of one call. Its payload is half of it.
const LLAreaBytes = 2 << 20

// LLLineBytes is one line: 8 data bytes, each 4 with a copy of the tag.
const LLLineBytes = 16

// LLTagPeriod: LLTag(e) == LLTag(e+LLTagPeriod), and no closer.
const LLTagPeriod = 1<<32 - 1

// LLTag is the tag of call e's lines: never 0.
func LLTag(e Epoch) uint32 { return uint32(llTag(uint64(e), LLTagPeriod)) }

func llTag(e, period uint64) uint64 { return e%period + 1 }

// llClearEvery: the host clears one parity of its own area before the
// calls whose epoch is 0 or 1 modulo this (not before the first: a
// team's area starts cleared).
const llClearEvery = 1 << 30

// LLClearBefore says whether the host must clear a parity of its own LL
// area (every byte to 0) before its call of epoch e, on the call's
// stream ahead of its kernel, and which: the parity of e+1. Peers write
// that parity next at e+1, which they begin only after this rank's
// kernel of e sent them something (after the clear); and this rank read
// its lines of e-1 in its call e-1, before. So each parity is cleared
// once in every llClearEvery calls, and a line is cleared before a call
// LLTagPeriod after the one that wrote it could mistake it for its own
// (TestLLClearsComeBeforeATagRepeats).
func LLClearBefore(e Epoch) (parity int, clear bool) { return llClearBefore(uint64(e), llClearEvery) }

func llClearBefore(e, every uint64) (parity int, clear bool) {
	return int((e + 1) & 1), e >= every && e%every < 2
}

// LLRegionBytes is the payload of one source's region in a rank's LL
// area: the bytes one rank sends another in a call (the allreduce's
// vector, the reduce_scatter's output block, the allgather's input),
// rounded up to Align.
func (s Shape) LLRegionBytes() int { return SlotBytes(s.Count * s.ElemSize) }

// LLOffset is the byte offset of parity (0 or 1) of a scratch region's
// LL area.
func LLOffset(parity int) int { return FlagBytes + parity*LLAreaBytes }

// LLLinesBytes is the LL area an LL call of s fills: a region of lines
// per rank, a line for every 8 bytes of payload.
func (s Shape) LLLinesBytes() int { return s.Ranks * s.LLRegionBytes() / 8 * LLLineBytes }

// LLFits says whether an LL call of s fits the LL area.
func (s Shape) LLFits() bool { return s.LLLinesBytes() <= LLAreaBytes }

// llValidate checks an LL shape: elements that fill whole 8-byte words
// (a line's payload, so that no word of a line is shared by two
// elements' owners), blocks of a reduce_scatter 8 bytes apart, a count,
// and lines that fit the area.
func (s Shape) llValidate() error {
	switch {
	case s.Count < 1:
		return fmt.Errorf("devsync: %v of no elements (an LL call must carry data: ll.go)", s.Alg)
	case s.Count*s.ElemSize%8 != 0 || s.BlockStride()*s.ElemSize%8 != 0:
		return fmt.Errorf("devsync: %v of %d elements of %d bytes (stride %d): LL lines carry whole 8-byte words", s.Alg, s.Count, s.ElemSize, s.BlockStride())
	case !s.LLFits():
		return fmt.Errorf("devsync: %v of %d bytes a rank on %d ranks: its lines need %d bytes, the LL area holds %d", s.Alg, s.Count*s.ElemSize, s.Ranks, s.LLLinesBytes(), LLAreaBytes)
	}
	return nil
}

// PollLL is one look of an LL reader at a line (the tags of its two
// words) and the abort word: done when both hold the call's tag; an
// *AbortError (position w, Peer the line's writer) when not and the
// abort word is set; neither means look again. As Poll, the line is
// looked at first.
func PollLL(lo, hi uint32, abort uint64, w AbortError) (done bool, err error) {
	if tag := LLTag(w.Epoch); lo == tag && hi == tag {
		return true, nil
	}
	if dead, ok := DeadRank(abort); ok {
		w.Dead = dead
		return false, &w
	}
	return false, nil
}
