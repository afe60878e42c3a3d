package crossmem

import "fmt"

// Allreduce (the package's doc, step 3): rank r reduces block r of every
// rank's source into block r of its result, then reads block q of rank
// q's result into its own once q says it is there (READY). Blocks are
// whole elements, rank q's the elements [q*E/P, (q+1)*E/P) of E.

// block is rank q's block of the call's vector: its offset and length in
// bytes.
func (c *Call) block(q int) (off, n int64) {
	esize := int64(c.cfg.Dtype.Size())
	elems := c.cfg.Dst.Len() / esize
	P := int64(c.cfg.Size)
	lo, hi := elems*int64(q)/P, elems*int64(q+1)/P
	return lo * esize, (hi - lo) * esize
}

// reduceBlock reduces this rank's block of every source, in rank order,
// into its result, on the team's threads.
func (c *Call) reduceBlock() error {
	r, team := c.cfg.Rank, c.cfg.Team
	off, n := c.block(r)
	if n == 0 {
		return nil
	}
	ends := parts(n, c.cfg.Dtype.Size(), team.threads)
	dst := c.cfg.Dst.Bytes()
	own := uint64(c.cfg.Src.Addr())
	return team.run(len(ends), func(i int, s *scratch) error {
		lo := int64(0)
		if i > 0 {
			lo = ends[i-1]
		}
		at := uint64(off + lo)
		s.ops = s.ops[:0]
		for q := 0; q < c.cfg.Size; q++ {
			if q == r {
				s.ops = append(s.ops, Operand{Addr: own + at})
			} else {
				s.ops = append(s.ops, Operand{Pid: c.peers[q].pid, Addr: c.peers[q].src + at})
			}
		}
		if err := team.reader.Reduce(dst[off+lo:off+ends[i]], s.ops, c.cfg.Dtype, c.cfg.Op, s.acc, s.in); err != nil {
			return fmt.Errorf("reducing block %d, bytes %d-%d: %w", r, off+lo, off+ends[i], err)
		}
		return nil
	})
}

// gatherBlock reads block q of rank q's result into this rank's.
func (c *Call) gatherBlock(q int) error {
	off, n := c.block(q)
	return c.readInto(c.cfg.Dst.Bytes()[off:off+n], q, c.peers[q].dst+uint64(off))
}

// readInto reads len(dst) bytes at addr of rank q into dst, on the team's
// threads.
func (c *Call) readInto(dst []byte, q int, addr uint64) error {
	team := c.cfg.Team
	if len(dst) == 0 {
		return nil
	}
	ends := parts(int64(len(dst)), 1, team.threads)
	return team.run(len(ends), func(i int, _ *scratch) error {
		lo := int64(0)
		if i > 0 {
			lo = ends[i-1]
		}
		if err := team.reader.Read(dst[lo:ends[i]], c.peers[q].pid, addr+uint64(lo)); err != nil {
			return fmt.Errorf("reading %d bytes of rank %d: %w", ends[i]-lo, q, err)
		}
		return nil
	})
}
