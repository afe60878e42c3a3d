package sched

import (
	"fmt"
	"sort"
)

// AlltoallvAt turns rank r's alltoallv program, written for the packed
// layout (src by destination and dst by source, each block at the prefix
// sum of the counts before it: AlltoallvDispls), into one over a caller's
// buffers whose blocks sit at displacements of the caller's choosing, as
// MPI_Alltoallv and UCC's info_v allow. sendAt[j] is the byte offset in
// src of the block for rank j, recvAt[i] the byte offset in dst of the
// block from rank i; counts is the plan's matrix (only row r and column r
// are read).
//
// Every step of an alltoallv program that touches src or dst stays inside
// one block (pairwise sends and receives whole blocks or chunks of one;
// nimble's pieces and chunks are consecutive ranges of one pair's block),
// so each offset maps by its block alone and no byte is staged. A step
// that spans blocks is a generator bug and an error here. The result's
// Src and Dst sizes are the caller's extents (the end of the farthest
// block); scratch is unchanged.
//
// Receive blocks that overlap are an error (MPI forbids them, and two
// receives writing one byte would race); send blocks may overlap.
func AlltoallvAt(prog *RankProgram, counts [][]int64, r int, sendAt, recvAt []int64) (*RankProgram, error) {
	n := len(counts)
	if r < 0 || r >= n || len(sendAt) != n || len(recvAt) != n {
		return nil, fmt.Errorf("sched: alltoallv displacements: %d send and %d receive entries for rank %d of %d", len(sendAt), len(recvAt), r, n)
	}
	sd, rd := AlltoallvDispls(counts, r)
	src, err := newBlockMap(sd, sendAt)
	if err != nil {
		return nil, fmt.Errorf("sched: alltoallv send displacements: %w", err)
	}
	dst, err := recvBlocks(rd, recvAt)
	if err != nil {
		return nil, err
	}
	out := &RankProgram{Rank: prog.Rank, Node: prog.Node, Local: prog.Local,
		Sizes: Sizes{Src: src.extent, Dst: dst.extent, Scratch: prog.Sizes.Scratch}}
	for id := range prog.Steps {
		s := prog.Steps[id]
		if s.readsBuf() {
			if s.SrcOff, err = mapSide(s.SrcBuf, s.SrcOff, s.Len, src, dst); err != nil {
				return nil, fmt.Errorf("sched: alltoallv step %d (%s): %w", id, s.Op, err)
			}
		}
		if s.writesBuf() {
			if s.DstOff, err = mapSide(s.DstBuf, s.DstOff, s.Len, src, dst); err != nil {
				return nil, fmt.Errorf("sched: alltoallv step %d (%s): %w", id, s.Op, err)
			}
		}
		out.Add(s, depsOf(prog, id, 0)...)
	}
	return out, nil
}

// AlltoallvRecvDisjoint checks a rank's receive side as AlltoallvAt
// does (every block in range, no two non-empty blocks overlapping), from
// the rank's own arguments alone: recv[i] bytes from rank i at byte
// recvAt[i] of dst. A rank can so refuse its displacements before it
// knows the count matrix, where AlltoallvAt would refuse them only once
// the matrix is planned.
func AlltoallvRecvDisjoint(recv, recvAt []int64) error {
	if len(recv) != len(recvAt) {
		return fmt.Errorf("sched: alltoallv displacements: %d receive counts, %d displacements", len(recv), len(recvAt))
	}
	prefix := make([]int64, len(recv)+1)
	for i, b := range recv {
		prefix[i+1] = prefix[i] + b
	}
	_, err := recvBlocks(prefix, recvAt)
	return err
}

// recvBlocks is the receive side's blockMap, refused where a block is out
// of range or two blocks overlap.
func recvBlocks(prefix, at []int64) (blockMap, error) {
	m, err := newBlockMap(prefix, at)
	if err != nil {
		return m, fmt.Errorf("sched: alltoallv receive displacements: %w", err)
	}
	if err := m.disjoint(); err != nil {
		return m, fmt.Errorf("sched: alltoallv receive blocks: %w", err)
	}
	return m, nil
}

// AlltoallvPacked reports whether displacements at are the packed layout
// of blocks whose prefix sums are prefix (AlltoallvDispls), so that a
// program needs no AlltoallvAt. Empty blocks may sit anywhere.
func AlltoallvPacked(prefix, at []int64) bool {
	for j := range at {
		if prefix[j+1] > prefix[j] && at[j] != prefix[j] {
			return false
		}
	}
	return true
}

// blockMap maps offsets of a packed buffer (blocks at prefix[j], length
// prefix[j+1]-prefix[j]) onto the caller's layout (block j at at[j]).
type blockMap struct {
	prefix, at []int64
	extent     int64
}

func newBlockMap(prefix, at []int64) (blockMap, error) {
	m := blockMap{prefix: prefix, at: at}
	for j, a := range at {
		l := prefix[j+1] - prefix[j]
		if l == 0 {
			continue
		}
		if a < 0 || a > (1<<62)-l {
			return m, fmt.Errorf("block %d of %d bytes at offset %d", j, l, a)
		}
		m.extent = max(m.extent, a+l)
	}
	return m, nil
}

// mapOff maps [off, off+n) of the packed buffer; it must lie in one block.
func (m blockMap) mapOff(off, n int64) (int64, error) {
	if n == 0 {
		return 0, nil // moves nothing: any offset in bounds will do
	}
	k := len(m.at)
	// The block holding off: the first j whose end passes off (blocks of
	// zero bytes end where they start, so they are never found).
	j := sort.Search(k, func(j int) bool { return m.prefix[j+1] > off })
	if j == k || off < m.prefix[j] || off+n > m.prefix[j+1] {
		return 0, fmt.Errorf("range [%d,%d) is not inside one block", off, off+n)
	}
	return m.at[j] + (off - m.prefix[j]), nil
}

// disjoint reports an error when two non-empty blocks overlap.
func (m blockMap) disjoint() error {
	type blk struct{ j, off, end int64 }
	var bs []blk
	for j, a := range m.at {
		if l := m.prefix[j+1] - m.prefix[j]; l > 0 {
			bs = append(bs, blk{int64(j), a, a + l})
		}
	}
	sort.Slice(bs, func(x, y int) bool { return bs[x].off < bs[y].off })
	for i := 1; i < len(bs); i++ {
		if bs[i].off < bs[i-1].end {
			return fmt.Errorf("block %d [%d,%d) overlaps block %d [%d,%d)", bs[i].j, bs[i].off, bs[i].end, bs[i-1].j, bs[i-1].off, bs[i-1].end)
		}
	}
	return nil
}

// mapSide maps one side of a step: src and dst move by their blocks,
// scratch stays.
func mapSide(b Buf, off, n int64, src, dst blockMap) (int64, error) {
	switch b {
	case BufSrc:
		return src.mapOff(off, n)
	case BufDst:
		return dst.mapOff(off, n)
	}
	return off, nil
}
