package sched

import "github.com/goring-hpc/goring/coll"

// K-nomial tree broadcast with radix 4 (UCC tl/ucp "knomial" bcast), rooted
// at Spec.Root.
//
// Ranks are renumbered v = (r - root) mod P so the root is 0. Rank v gets
// the message at the level m (a power of the radix) where v stops being a
// multiple of radix*m, from its parent v - (v mod radix*m); it then serves
// its children v + j*m' for j = 1..radix-1 on every lower level m' = m/radix,
// ..., 1, biggest subtree first. The root serves from the top level. Depth is
// ceil(log4 P). Every piece is forwarded as soon as it arrives, so chunking
// pipelines down the tree.

// bcastRadix is the k of the k-nomial tree.
const bcastRadix = 4

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Bcast,
		Name:       "knomial",
		Desc:       "k-nomial tree (radix 4) from the root; pieces forwarded as they arrive",
		Paper:      "UCC tl/ucp knomial bcast (baseline)",
		Rank:       bcastKnomialRank,
	})
}

func bcastKnomialRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	r := prog.Rank
	root := spec.Root
	B := spec.Bytes
	elem := spec.DtypeBytes
	prog.Sizes = Sizes{Src: B, Dst: B}
	h := NewHazards(prog)
	v := (r - root + n) % n
	real := func(x int) int { return (x + root) % n }
	k := ChunkCount(B, spec.Chunks, elem)
	whole := Span{0, B}
	mask := 1
	src := BufDst
	for mask < n {
		if v%(bcastRadix*mask) != 0 {
			parent := v - v%(bcastRadix*mask)
			for c := 0; c < k; c++ {
				p := ChunkSpan(whole, k, c, elem)
				h.Recv(real(parent), c, At(BufDst, p.Off), p.Len)
			}
			break
		}
		mask *= bcastRadix
	}
	if v == 0 {
		h.Copy(At(BufSrc, 0), At(BufDst, 0), B)
		src = BufSrc // the root sends from its input, not waiting for the copy
	}
	for m := mask / bcastRadix; m >= 1; m /= bcastRadix {
		for j := 1; j < bcastRadix; j++ {
			child := v + j*m
			if child >= n {
				break
			}
			for c := 0; c < k; c++ {
				p := ChunkSpan(whole, k, c, elem)
				h.Send(real(child), c, At(src, p.Off), p.Len, Path{})
			}
		}
	}
	return nil
}
