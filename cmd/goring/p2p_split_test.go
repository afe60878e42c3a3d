package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
)

// The static splits of the p2p search: pct percent of the bytes on the
// host path in the model's chunk count, the rest direct, and a plan that
// carries every byte.
func TestStaticSplit(t *testing.T) {
	o := model.DefaultOptions()
	paths := p2pPaths(model.Fit{AlphaUS: 8, BetaGBps: 1400}, model.Fit{AlphaUS: 6, BetaGBps: 50}, model.Fit{AlphaUS: 6, BetaGBps: 45}, o)
	for _, n := range []int64{1<<20 + 3, 256 << 20, 1 << 30} {
		for pct := 0; pct <= 10; pct++ {
			s := staticSplit(paths, n, pct, o)
			var sum int64
			for _, sh := range s.Paths {
				sum += sh.Bytes
			}
			require.Equal(t, n, sum)
			if pct == 0 {
				assert.Len(t, s.Paths, 1)
				continue
			}
			host := s.Paths[1]
			assert.Equal(t, n*int64(pct)/100, host.Bytes)
			assert.GreaterOrEqual(t, host.Chunks, 1)
			assert.LessOrEqual(t, host.Chunks, o.MaxChunks)
			plan, err := mpath.Build(s, 64<<20)
			require.NoError(t, err)
			assert.LessOrEqual(t, plan.Paths[1].StageBytes(), int64(64<<20))
		}
	}
}
