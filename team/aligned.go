package team

import (
	"github.com/goring-hpc/goring/exec"
)

// Misaligned buffers. MPI and UCC let a caller's buffer start anywhere (a
// float array at an odd offset of a byte buffer is legal), while goring's
// reductions on the message path (exec/reduce on the host, cuda's
// reduction kernels on a GPU) read and write whole elements at aligned
// addresses. A rank cannot refuse such a call alone: its peers, whose
// buffers are aligned, would run it and wait for it for ever. So a rank
// whose input or output of a reduction is not aligned to the element size
// reduces in aligned copies of its own, in the same memory: the input
// copied in at every post (the same copy an in-place call takes,
// copyInput), the output copied out when the call completes
// (copyOutput). Its peers run the same program and never know. The C
// executor (cexec) and the node kernels read and write unaligned elements
// themselves.

// alignForReduction gives b an aligned stand-in for a misaligned source
// or destination of a reduction (b's regions are the program's).
func (c *Coll) alignForReduction(a Args, mem exec.Mem, b *exec.Buffers) error {
	if !a.Coll.Reduces() {
		return nil
	}
	esize := uintptr(a.Dtype.Size())
	if b.Src.Len() > 0 && b.Src.Addr()%esize != 0 {
		priv, err := c.privateRegion(mem, b.Src.Len())
		if err != nil {
			return err
		}
		c.input = privateCopy{from: b.Src, to: priv}
		b.Src = priv
	}
	if b.Dst.Len() > 0 && b.Dst.Addr()%esize != 0 {
		priv, err := c.privateRegion(mem, b.Dst.Len())
		if err != nil {
			return err
		}
		c.output = privateCopy{from: priv, to: b.Dst}
		b.Dst = priv
	}
	return nil
}

// copyOutput copies a misaligned output's stand-in to the caller's
// buffer, once the call has completed.
func (c *Coll) copyOutput() error { return c.take(c.output, "a misaligned output's copy") }
