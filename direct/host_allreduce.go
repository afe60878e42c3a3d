package direct

import "fmt"

// Allreduce (the package's doc, step 3): rank r reduces block r of every
// rank's source into block r of its result and writes each reduced piece
// into block r of every peer's result while it is still in cache. Blocks
// are whole elements, rank q's the elements [q*E/P, (q+1)*E/P) of E. A
// block is reduced once, this rank's operand first, then the peers' in
// rank order: every rank gets the same bits.

// block is rank q's block of the call's vector: its offset and length in
// bytes.
func (c *Call) block(q int) (off, n int64) {
	esize := int64(c.cfg.Dtype.Size())
	elems := c.cfg.Dst.Len() / esize
	P := int64(c.cfg.Size)
	lo, hi := elems*int64(q)/P, elems*int64(q+1)/P
	return lo * esize, (hi - lo) * esize
}

// reduceBlock reduces this rank's block of every source into its result
// and every peer's, on the team's threads.
func (c *Call) reduceBlock() error {
	r, team := c.cfg.Rank, c.cfg.Host
	off, n := c.block(r)
	if n == 0 {
		return nil
	}
	dst := c.cfg.Dst.Bytes()
	own := uint64(c.cfg.Src.Addr())
	team.reset()
	srcs := make([]Operand, 0, c.cfg.Size)
	outs := make([]Operand, 0, c.cfg.Size-1)
	lo := int64(0)
	for _, hi := range parts(n, c.cfg.Dtype.Size(), team.threads) {
		at := uint64(off + lo)
		srcs, outs = append(srcs[:0], Operand{Addr: own + at}), outs[:0]
		for q := 0; q < c.cfg.Size; q++ {
			if q != r {
				srcs = append(srcs, Operand{Pid: c.host.peers[q].pid, Addr: c.host.peers[q].src + at})
				outs = append(outs, Operand{Pid: c.host.peers[q].pid, Addr: c.host.peers[q].dst + at})
			}
		}
		team.add(dst[off+lo:off+hi], srcs, outs)
		lo = hi
	}
	if err := team.run(c.cfg.Dtype, c.cfg.Op); err != nil {
		return fmt.Errorf("reducing block %d (%d bytes): %w", r, n, err)
	}
	return nil
}

// addReads adds the jobs that read len(dst) bytes at addr of rank q (this
// rank: a local copy) into dst, in parts for the team's threads.
func (c *Call) addReads(dst []byte, q int, addr uint64) {
	if len(dst) == 0 {
		return
	}
	pid := c.host.peers[q].pid
	if q == c.cfg.Rank {
		pid = 0
	}
	lo := int64(0)
	for _, hi := range parts(int64(len(dst)), 1, c.cfg.Host.threads) {
		c.cfg.Host.add(dst[lo:hi], []Operand{{Pid: pid, Addr: addr + uint64(lo)}}, nil)
		lo = hi
	}
}
