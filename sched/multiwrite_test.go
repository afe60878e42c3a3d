package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/topo"
)

func presetTopo(t *testing.T, name string, nodes int) *topo.Topology {
	t.Helper()
	tp, err := topo.Preset(name)
	require.NoError(t, err)
	tp, err = tp.Repeat(nodes)
	require.NoError(t, err)
	return tp
}

// hopList writes a part's hops as "from>to{serves}" for readable asserts.
func hopList(p RelayPart) []string {
	var out []string
	for _, h := range p.Hops {
		out = append(out, fmt.Sprintf("%d>%d%v%s", h.From, h.To, h.Serves, h.Path))
	}
	return out
}

// Hand-checked trees: the paired relaying of MultiWrite section 3.1 on the
// 8-way mesh (NPU1..4 = ranks 0..3, NPU5..8 = ranks 4..7, pairs [0,4],
// [1,5], ...), and the same-index relay of section 3.2 on two servers.
func TestPlanMulticastTrees(t *testing.T) {
	mesh := presetTopo(t, "ascend-8p", 1)
	two := presetTopo(t, "clusterB", 2)
	four := presetTopo(t, "clusterB", 4)
	pairs := []int{4, 5, 6, 7, 0, 1, 2, 3}
	all16 := FullBitmap(16)
	cases := []struct {
		name  string
		tp    *topo.Topology
		msg   Multicast
		opt   RelayOptions
		spans []Span
		hops  [][]string
	}{
		{"1 TP=4 domain, no pairing: three direct writes", mesh, Multicast{Src: 0, Dests: BitmapOf(8, 1, 2, 3), Bytes: 64}, RelayOptions{},
			[]Span{{0, 64}}, [][]string{{"0>1[1]", "0>2[2]", "0>3[3]"}}},
		{"2 paired relaying: half direct, half once over 0-4 then replicated", mesh, Multicast{Src: 0, Dests: BitmapOf(8, 1, 2, 3), Bytes: 64}, RelayOptions{Partner: pairs},
			[]Span{{0, 32}, {32, 32}}, [][]string{{"0>1[1]", "0>2[2]", "0>3[3]"}, {"0>4[1 2 3]", "4>1[1]", "4>2[2]", "4>3[3]"}}},
		{"3 unicast multipath: a quarter relayed, three copies on 0-4", mesh, Multicast{Src: 0, Dests: BitmapOf(8, 1, 2, 3), Bytes: 64}, RelayOptions{Partner: pairs, Unicast: true},
			[]Span{{0, 48}, {48, 16}}, [][]string{{"0>1[1]", "0>2[2]", "0>3[3]"}, {"0>4[1]", "4>1[1]", "0>4[2]", "4>2[2]", "0>4[3]", "4>3[3]"}}},
		{"4 domain 2 source 6 through partner 2", mesh, Multicast{Src: 6, Dests: BitmapOf(8, 4, 5, 6, 7), Bytes: 8}, RelayOptions{Partner: pairs},
			[]Span{{0, 4}, {4, 4}}, [][]string{{"6>4[4]", "6>5[5]", "6>7[7]"}, {"6>2[4 5 7]", "2>4[4]", "2>5[5]", "2>7[7]"}}},
		{"5 partner is a destination: no pairing", mesh, Multicast{Src: 0, Dests: BitmapOf(8, 1, 4), Bytes: 8}, RelayOptions{Partner: pairs},
			[]Span{{0, 8}}, [][]string{{"0>1[1]", "0>4[4]"}}},
		{"6 two servers: same-index relay over rail 1, then local writes", two, Multicast{Src: 1, Dests: BitmapOf(8, 0, 2, 3, 4, 5, 6, 7), Bytes: 8}, RelayOptions{},
			[]Span{{0, 8}}, [][]string{{"1>5[4 5 6 7]rail:1", "5>4[4]", "5>6[6]", "5>7[7]", "1>0[0]", "1>2[2]", "1>3[3]"}}},
		{"7 MoE dispatch: relay 4 is not a target but forwards", two, Multicast{Src: 0, Dests: BitmapOf(8, 5, 6), Bytes: 8}, RelayOptions{},
			[]Span{{0, 8}}, [][]string{{"0>4[5 6]rail:0", "4>5[5]", "4>6[6]"}}},
		{"8 one remote target of the same index: one hop", two, Multicast{Src: 2, Dests: BitmapOf(8, 6), Bytes: 8}, RelayOptions{},
			[]Span{{0, 8}}, [][]string{{"2>6[6]rail:2"}}},
		{"9 four servers, flat: one copy per server from the source", four, Multicast{Src: 1, Dests: all16, Bytes: 8}, RelayOptions{},
			[]Span{{0, 8}}, [][]string{{"1>5[4 5 6 7]rail:1", "5>4[4]", "5>6[6]", "5>7[7]", "1>9[8 9 10 11]rail:1", "9>8[8]", "9>10[10]", "9>11[11]",
				"1>13[12 13 14 15]rail:1", "13>12[12]", "13>14[14]", "13>15[15]", "1>0[0]", "1>2[2]", "1>3[3]"}}},
		{"10 four servers, node tree: relay 9 serves servers 2 and 3 through relay 13", four, Multicast{Src: 1, Dests: all16, Bytes: 8}, RelayOptions{NodeTree: true},
			[]Span{{0, 8}}, [][]string{{"1>9[8 9 10 11 12 13 14 15]rail:1", "9>13[12 13 14 15]rail:1", "13>12[12]", "13>14[14]", "13>15[15]", "9>8[8]", "9>10[10]", "9>11[11]",
				"1>5[4 5 6 7]rail:1", "5>4[4]", "5>6[6]", "5>7[7]", "1>0[0]", "1>2[2]", "1>3[3]"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trees, err := PlanMulticast(c.tp, []Multicast{c.msg}, 4, c.opt)
			require.NoError(t, err)
			require.Len(t, trees[0].Parts, len(c.spans))
			for i, p := range trees[0].Parts {
				assert.Equal(t, c.spans[i], p.Span, "part %d", i)
				assert.Equal(t, c.hops[i], hopList(p), "part %d", i)
			}
		})
	}
}

func TestPlanMulticastRejects(t *testing.T) {
	mesh := presetTopo(t, "ascend-8p", 1)
	two := presetTopo(t, "clusterB", 2)
	noRails := presetTopo(t, "clusterB", 1)
	noRails.Rails = nil
	noRails, _ = noRails.Repeat(2)
	cases := []struct {
		name string
		tp   *topo.Topology
		msg  Multicast
		opt  RelayOptions
		want string
	}{
		{"1 source out of range", mesh, Multicast{Src: 8, Dests: BitmapOf(8, 1), Bytes: 4}, RelayOptions{}, "source rank 8 out of range"},
		{"2 destination out of range", mesh, Multicast{Src: 0, Dests: BitmapOf(70, 69), Bytes: 4}, RelayOptions{}, "destination rank 69 out of range"},
		{"3 partial element", mesh, Multicast{Src: 0, Dests: BitmapOf(8, 1), Bytes: 6}, RelayOptions{}, "6 bytes is not a whole number"},
		{"4 partner on another node", two, Multicast{Src: 0, Dests: BitmapOf(8, 1), Bytes: 4}, RelayOptions{Partner: []int{4, -1, -1, -1, -1, -1, -1, -1}}, "partner 4 of rank 0"},
		{"5 partner list too short", mesh, Multicast{Src: 0, Dests: BitmapOf(8, 1), Bytes: 4}, RelayOptions{Partner: []int{4}}, "1 partners for 8 ranks"},
		{"6 share out of range", mesh, Multicast{Src: 0, Dests: BitmapOf(8, 1), Bytes: 4}, RelayOptions{RelayShare: 1}, "relay share 1"},
		{"7 nodes without rails", noRails, Multicast{Src: 0, Dests: BitmapOf(8, 5), Bytes: 4}, RelayOptions{}, "no rails"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := PlanMulticast(c.tp, []Multicast{c.msg}, 4, c.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// pairBytes sums the bytes every (sender, receiver) pair moves in a plan:
// on a full mesh, the load of the direct link between them.
func pairBytes(p *Plan) map[[2]int]int64 {
	out := map[[2]int]int64{}
	for r := range p.Ranks {
		for _, s := range p.Ranks[r].Steps {
			if s.Op == OpSend {
				out[[2]int{r, int(s.Peer)}] += s.Len
			}
		}
	}
	return out
}

// MultiWrite section 3.1's derivation, checked on link loads: two TP=4
// allgathers on ascend-8p with S bytes per rank. The busiest direct link
// carries S (baseline), 3S/4 (unicast multipath: three copies of the
// relayed quarter on the cross link) and S/2 (MultiWrite): latency 50%
// below the baseline and 33% below unicast multipath, when links are the
// bottleneck. Every plan is checked for contents with VerifyMulticast.
func TestGroupedAllgatherLinkLoads(t *testing.T) {
	mesh := presetTopo(t, "ascend-8p", 1)
	groups := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}
	const S = 4096
	cases := []struct {
		mode              GroupedMode
		maxLink, intra    int64
		cross, crossOther int64 // i -> partner, i -> other ranks of the other group
	}{
		{GroupedDirect, S, S, 0, 0},
		{GroupedUnicastMultipath, 3 * S / 4, 3 * S / 4, 3 * S / 4, S / 4},
		{GroupedMultiWrite, S / 2, S / 2, S / 2, S / 2},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("case%d_%s", i, c.mode), func(t *testing.T) {
			plan, msgs, place, err := GroupedAllgather(mesh, groups, S, 4, 0, c.mode)
			require.NoError(t, err)
			_, err = VerifyMulticast(plan, msgs, place)
			require.NoError(t, err)
			loads := pairBytes(plan)
			var maxLoad int64
			for _, v := range loads {
				maxLoad = max(maxLoad, v)
			}
			assert.Equal(t, c.maxLink, maxLoad)
			assert.Equal(t, c.intra, loads[[2]int{0, 1}], "0->1 inside the domain")
			assert.Equal(t, c.cross, loads[[2]int{0, 4}], "0->4, the pair link")
			assert.Equal(t, c.crossOther, loads[[2]int{0, 5}], "0->5, relaying 4's block")
			for r := range plan.Ranks {
				want := int64(0)
				if c.mode == GroupedUnicastMultipath {
					want = 3 * S / 4 // three relayed quarters wait in the partner's scratch
				} else if c.mode == GroupedMultiWrite {
					want = S / 2
				}
				assert.Equal(t, want, plan.Ranks[r].Sizes.Scratch, "rank %d", r)
			}
		})
	}
}

// Grouped plans of odd sizes, dtypes and chunk counts pass VerifyMulticast,
// and a corrupted plan fails it (the check can fail).
func TestGroupedAllgatherVerifies(t *testing.T) {
	mesh := presetTopo(t, "ascend-8p", 1)
	groups := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}
	i := 0
	for _, mode := range []GroupedMode{GroupedDirect, GroupedUnicastMultipath, GroupedMultiWrite} {
		for _, elems := range []int64{1, 3, 1001} {
			for _, chunks := range []int{0, 3} {
				for _, dt := range []int{2, 8} {
					plan, msgs, place, err := GroupedAllgather(mesh, groups, elems*int64(dt), dt, chunks, mode)
					require.NoError(t, err, "case %d", i)
					_, err = VerifyMulticast(plan, msgs, place)
					require.NoError(t, err, "case %d: %s %d elements of %d bytes, %d chunks", i, mode, elems, dt, chunks)
					i++
				}
			}
		}
	}
	plan, msgs, place, err := GroupedAllgather(mesh, groups, 64, 4, 0, GroupedMultiWrite)
	require.NoError(t, err)
	place[1].DstOff = 128 // claims rank 1's block lands in slot 2
	_, err = VerifyMulticast(plan, msgs, place)
	require.ErrorContains(t, err, "content")
	_, _, _, err = GroupedAllgather(mesh, [][]int{{0, 1, 2}}, 64, 4, 0, GroupedMultiWrite)
	require.ErrorContains(t, err, "two groups of equal size")
}

// A dispatch-like message set across two servers (MultiWrite section 3.2):
// the same-index relay holds tokens it does not want in scratch, each
// server's rail port carries every token once, and the contents verify.
func TestLowerMulticastDispatch(t *testing.T) {
	two := presetTopo(t, "clusterB", 2)
	n := 8
	msgs := []Multicast{
		{Src: 0, Dests: BitmapOf(n, 5, 6, 7), Bytes: 16},    // relay 4 not a target
		{Src: 1, Dests: BitmapOf(n, 1, 2, 5, 4), Bytes: 16}, // own copy, local 2, relay 5 is a target
		{Src: 6, Dests: BitmapOf(n, 0, 3), Bytes: 8},        // relay 2 not a target
	}
	place := []Placement{{At(BufSrc, 0), 0}, {At(BufSrc, 0), 16}, {At(BufSrc, 0), 32}}
	for i, chunks := range []int{0, 2} {
		trees, err := PlanMulticast(two, msgs, 4, RelayOptions{})
		require.NoError(t, err)
		plan := newPlan(&Spec{Topo: two, Bytes: 16, DtypeBytes: 4}, "dispatch_sketch")
		plan.SetSizes(Sizes{Src: 16, Dst: 40})
		require.NoError(t, LowerMulticast(plan, msgs, trees, place, 4, chunks))
		_, err = VerifyMulticast(plan, msgs, place)
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, int64(16), plan.Ranks[4].Sizes.Scratch, "case %d: relay 4 holds message 0", i)
		assert.Equal(t, int64(8), plan.Ranks[2].Sizes.Scratch, "case %d: relay 2 holds message 2", i)
		assert.Zero(t, plan.Ranks[5].Sizes.Scratch, "case %d: relay 5 is a target and forwards from dst", i)
		var inter int64
		for r := range plan.Ranks {
			for _, s := range plan.Ranks[r].Steps {
				if s.Op == OpSend && plan.Ranks[s.Peer].Node != plan.Ranks[r].Node {
					inter += s.Len
				}
			}
		}
		assert.Equal(t, int64(16+16+8), inter, "case %d: one copy per message per remote server", i)
		require.Error(t, LowerMulticast(plan, msgs, trees, place, 4, chunks), "case %d: programs not empty", i)
	}
}

func TestBitmap(t *testing.T) {
	b := NewBitmap(130)
	for _, r := range []int{0, 63, 64, 129} {
		b.Set(r)
	}
	assert.Equal(t, 4, b.Count())
	assert.Equal(t, []int{0, 63, 64, 129}, b.Ranks())
	b.Clear(63)
	assert.False(t, b.Has(63))
	assert.Equal(t, 130, FullBitmap(130).Count())
	assert.False(t, b.Has(500))
	assert.True(t, b.Has(129))
}
