package crossmem

// Allgather (the package's doc, step 3): rank r reads rank q's source
// into block q of its result, for every q, and copies its own (unless in
// place, where its source is that block). Sources are inputs, ready once
// their ranks arrived, so there is no READY.

// gatherAll reads every peer's source into its block of the result.
func (c *Call) gatherAll() error {
	B := c.cfg.Src.Len()
	dst := c.cfg.Dst.Bytes()
	for q := 0; q < c.cfg.Size; q++ {
		blk := dst[int64(q)*B : int64(q+1)*B]
		if q == c.cfg.Rank {
			if src := c.cfg.Src.Bytes(); len(src) > 0 && &src[0] != &blk[0] {
				copy(blk, src)
			}
			continue
		}
		if err := c.readInto(blk, q, c.peers[q].src); err != nil {
			return err
		}
	}
	return nil
}
