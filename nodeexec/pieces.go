package nodeexec

import (
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// Pieces: an allreduce or a reduce_scatter too large for the team's slots
// runs as several kernels, launched in order on the stream, each on a
// piece that fits and each with its own epoch. Every rank cuts alike,
// since every rank has the same slots and the same call. An allreduce's
// pieces are ranges of its vector; a reduce_scatter's are the same range
// of every input block (the kernel reads the blocks a stride apart) and
// that range of the output.

// pieceCount is the largest piece of c, in elements, that fits a slot: a
// whole number of vectors per rank (an allreduce's two-shot regions, a
// reduce_scatter's blocks). 0: none fits, or c does not run in pieces.
func (l *Local) pieceCount(c Call) int {
	esz := c.Dtype.Size()
	vec := devsync.VecElems(esz)
	switch c.Collective {
	case coll.Allreduce:
		unit := l.size * vec // a vector per rank
		return l.slot / (esz * unit) * unit
	case coll.ReduceScatter:
		return l.slot / (esz * l.size) / vec * vec // a block per rank
	}
	return 0
}

// pieces cuts c into pieces of pieceCount elements (the last one
// shorter); nil where no piece fits.
func (l *Local) pieces(c Call) []Call {
	per := l.pieceCount(c)
	if per == 0 {
		return nil
	}
	esz := cuda.DevicePtr(c.Dtype.Size())
	stride := c.Stride
	if stride == 0 {
		stride = c.Count
	}
	var ps []Call
	for off := 0; off < c.Count; off += per {
		p := c
		p.Count = min(per, c.Count-off)
		p.In, p.Out = c.In+cuda.DevicePtr(off)*esz, c.Out+cuda.DevicePtr(off)*esz
		if c.Collective == coll.ReduceScatter {
			p.Stride = stride
		}
		ps = append(ps, p)
	}
	return ps
}
