package team

import (
	"github.com/goring-hpc/goring/exec"
)

// Misaligned host buffers. MPI and UCC let a caller's buffer start
// anywhere (a float array at an odd offset of a byte buffer is legal),
// while goring's host reductions (exec/reduce) read and write whole
// elements at aligned addresses. A rank cannot refuse such a call alone:
// its peers, whose buffers are aligned, would run it and wait for it for
// ever. So a rank whose input or output of a reduction is not aligned to
// the element size reduces in aligned copies of its own: the input copied
// in at every post (the same copy an in-place call takes, copyInput), the
// output copied out when the call completes (copyOutput). Its peers run
// the same program and never know. The C executor (cexec) reads and
// writes unaligned elements itself.

// alignForReduction gives b an aligned stand-in for a misaligned source
// or destination of a host reduction (b's regions are the program's).
func (c *Coll) alignForReduction(a Args, mem exec.Mem, b *exec.Buffers) {
	if !mem.IsHost() || !a.Coll.Reduces() {
		return
	}
	esize := uintptr(a.Dtype.Size())
	if b.Src.Len() > 0 && b.Src.Addr()%esize != 0 {
		priv := exec.HostRegion(c.alloc(b.Src.Len()))
		c.input = inputCopy{from: b.Src, to: priv}
		b.Src = priv
	}
	if b.Dst.Len() > 0 && b.Dst.Addr()%esize != 0 {
		priv := exec.HostRegion(c.alloc(b.Dst.Len()))
		c.output = inputCopy{from: priv, to: b.Dst}
		b.Dst = priv
	}
}

// copyOutput copies a misaligned output's stand-in to the caller's
// buffer, once the call has completed.
func (c *Coll) copyOutput() error {
	out := c.output
	if out.to.Len() == 0 {
		return nil
	}
	copy(out.to.Bytes(), out.from.Bytes())
	return nil
}
