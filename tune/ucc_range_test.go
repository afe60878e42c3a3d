package tune

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
)

// claimedAt says whether UCC 1.8 runs goring for a call of c on mem of
// msg bytes (UCC's count: an allgather's whole result) by the score
// string str, every entry of which outscores the layer UCC would
// otherwise run. UCC keeps a range "lo-hi" as [lo, hi) while merging
// layers, but its lookup (ucc_coll_score_map_lookup) takes both ends,
// and where two layers' ranges meet at a size it gives that size to the
// higher score: to goring's claim, at either end.
func claimedAt(t *testing.T, str string, c coll.Collective, mem string, msg int64) bool {
	t.Helper()
	if str == "" {
		return false
	}
	for _, e := range strings.Split(str, "#") {
		f := strings.Split(e, ":")
		require.Len(t, f, 4, "entry %q", e)
		if f[0] != string(c) || f[1] != mem {
			continue
		}
		lohi := strings.Split(f[2], "-")
		require.Len(t, lohi, 2, "range of %q", e)
		lo, err := strconv.ParseInt(lohi[0], 10, 64)
		require.NoError(t, err)
		hi := int64(1) << 62
		if lohi[1] != "inf" {
			hi, err = strconv.ParseInt(lohi[1], 10, 64)
			require.NoError(t, err)
		}
		require.Less(t, lo, hi, "UCC refuses an empty range: %q", e)
		if msg >= lo && msg <= hi {
			return true
		}
	}
	return false
}

// uccBytes is UCC's message size of a call of bytes per rank.
func uccBytes(c coll.Collective, ranks int, bytes int64) int64 {
	if c == coll.Allgather {
		return bytes * int64(ranks)
	}
	return bytes
}

// At every size a shipped table measured, UCC runs goring exactly where
// goring was measured faster than the layer UCC would otherwise run: a
// claimed range must not reach the next row's size, which is where a
// power-of-two call of ucc_perftest or an application lands.
func TestNodeClaimsEndsAtMeasuredSizes(t *testing.T) {
	layerSets := [][]string{{"ucp", "cuda", "nccl"}, {"ucp", "nccl"}, {"ucp"}}
	for _, ts := range [][]nodeTable{nodeTables, sharedTables} {
		for _, tb := range ts {
			for _, layers := range layerSets {
				present := map[string]bool{}
				for _, l := range layers {
					present[l] = true
				}
				str := NodeClaims(tb.gpu, tb.ranks, tb.shared, layers, nil)
				for c, rows := range tb.rows {
					for _, r := range rows {
						want := fasterThanDefault(r, present)
						got := claimedAt(t, str, c, "cuda", uccBytes(c, tb.ranks, r.bytes))
						assert.Equal(t, want, got, "%s %d ranks shared=%v %v: %s at %d B a rank (goring %.1f µs, peers %v)",
							tb.gpu, tb.ranks, tb.shared, layers, c, r.bytes, r.goring, r.peers)
					}
				}
			}
		}
	}
}

// The model's claims likewise: UCC runs goring at a predicted size
// exactly where the prediction claimed it.
func TestModelClaimsEndAtPredictedSizes(t *testing.T) {
	for _, procs := range []int{2, 4} {
		for _, gpus := range []int{0, 1, procs} {
			s := Shape{Size: procs, OneHost: true, GPUs: gpus, CMax: 64 << 10, Lanes: 4, Leader: direct.Model{}}
			str, points, _ := Claims(s, choose.OneHost(procs, gpus).Claim)
			for key, pts := range points {
				mem, c, _ := strings.Cut(key, " ")
				for _, p := range pts {
					got := claimedAt(t, str, coll.Collective(c), mem, uccBytes(coll.Collective(c), procs, p.Bytes))
					assert.Equal(t, p.Claimed, got, "%d ranks on %d GPUs, %s at %d B a rank (goring %s %.2f µs, tl/ucp %s %.2f µs)",
						procs, gpus, key, p.Bytes, p.GoringAlg, p.GoringUS, p.UCPAlg, p.UCPUS)
				}
			}
		}
	}
}
