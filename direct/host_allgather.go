package direct

import "fmt"

// Allgather (the package's doc, step 3): rank r reads rank q's source
// into block q of its result, for every q, and copies its own (unless in
// place, where its source is that block). Sources are inputs, ready once
// their ranks have arrived.

// gatherAll reads every peer's source into its block of the result, and
// copies this rank's own, all on the team's threads at once.
func (c *Call) gatherAll() error {
	B := c.cfg.Src.Len()
	dst := c.cfg.Dst.Bytes()
	team := c.cfg.Host
	team.reset()
	for q := 0; q < c.cfg.Size; q++ {
		blk := dst[int64(q)*B : int64(q+1)*B]
		if q == c.cfg.Rank {
			if src := c.cfg.Src.Bytes(); len(src) > 0 && &src[0] != &blk[0] {
				c.addReads(blk, q, uint64(c.cfg.Src.Addr()))
			}
			continue
		}
		c.addReads(blk, q, c.host.peers[q].src)
	}
	if err := team.run(c.cfg.Dtype, c.cfg.Op); err != nil {
		return fmt.Errorf("reading the peers' blocks: %w", err)
	}
	return nil
}
