package sched

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/goring-hpc/goring/topo"
)

// MultiWrite relay multicast (MultiWrite) as a pure schedule.
//
// MultiWrite removes redundant copies of one message from bottleneck links:
// the source injects ONE copy per next hop, and GPUs on the way (relays)
// replicate it to the destinations their part of the message's destination
// set names. This file is the planner (which GPU relays which part to whom)
// and the lowering of its relay trees into rank programs; the registered
// algorithms (alg_allgather_multiwrite.go, alg_bcast_multiwrite.go) and
// the grouped allgather of the TP-domain case (multiwrite_grouped.go) are
// thin users of it.
//
// # Destination bitmap, not a multicast group (section 4.1)
//
// A message carries its destination set as a Bitmap over ranks. A holder
// (the source or a relay) splits the bitmap by next hop and sends each next
// hop one copy carrying only its part of the bitmap (RelayHop.Serves), so no
// destination is served twice and no group has to exist beforehand.
//
// # Recursive execution (section 4.3.3)
//
// fanout applies the same rule at every holder: destinations on the
// holder's own node get a direct write each (one destination left: a plain
// write, rule 2); destinations on another node share one next hop, that
// node's relay, which gets one copy and the sub-bitmap of its node, and
// runs the same rule on it (rule 3). The tree is the call tree of fanout.
//
// # How relays are picked, and why each bottleneck link carries one copy
//
//   - Across nodes: the same-index relay of section 3.2. The source on
//     local index l sends one copy to local index l of every remote node
//     that holds destinations, over its own rail (rail:<GPU.Rail>), and that
//     GPU replicates to the node's destinations over intra-node links. The
//     inter-node path into a node (its rail port, the oversubscribed
//     fabric of section 3.2) therefore carries each message once, however
//     many of its GPUs want it; unicast would carry it once per GPU. The
//     source still sends one copy per remote NODE: switches do not
//     replicate (section 1: no switch changes), so that is the least a
//     source NIC can send without a relay on another node. With
//     RelayOptions.NodeTree a relay's part of the bitmap may name further
//     nodes (the recursion between relays of section 4.3.3): the far half
//     of the remaining nodes goes as one copy to the relay of its first
//     node, so the source's port sends ceil(log2 N) copies; every node's
//     port still receives one. Copies through one NIC port go one after
//     another (RelayHop.After), so the first relay forwards while the next
//     copy is on the wire.
//   - Inside a full-mesh node: direct writes. Every destination has its own
//     link from the holder, so each link carries the message once already.
//     When the destinations are a domain that leaves other links of the mesh
//     idle, paired relaying (section 3.1) adds the idle links: with
//     RelayOptions.Partner, the source on rank s splits the message into a
//     direct part and a relay part; the relay part crosses the link s ->
//     Partner[s] ONCE and the partner replicates it to the destinations
//     (section 5.2: "one cross-TP MultiWrite"). The split balances the two
//     paths (share = relay bandwidth / (direct + relay bandwidth), section
//     5.2's "split ratio from the measured bandwidth of both link types"):
//     1/2 on equal links, the 50% of section 3.1.
//   - RelayOptions.Unicast builds the paper's unicast multipath baseline
//     instead (sections 3.1 and 6.1): the relay part crosses s -> Partner[s]
//     once per destination, so its balanced share is 1/(|D|+1) and the
//     latency 3/4 of the baseline for TP=4, which multicast cuts by a third.
//
// # Lowering (section 6.4: relays reuse the receive buffers)
//
// LowerMulticast turns trees into steps with Hazards: a relay that is also a
// destination receives into its dst at the message's place and forwards from
// there, so allgather and bcast need no scratch; a relay that is not a
// destination (a partner of paired relaying, the same-index GPU of a MoE
// dispatch whose token it does not want) receives into a scratch slot of
// its own. Spec.Chunks pieces pipeline through relays: the pieces of a hop
// go in sequence and a relay forwards piece c as soon as piece c arrived.
// Trees are planned and lowered one message at a time (O(P) memory for P
// messages of P destinations), for every rank or for one (GenerateRank).

// Multicast is one message for the planner: Bytes at rank Src go to every
// rank of Dests (MultiWrite section 4.3.1, MultiWrite(s, D, buf)). A Src bit
// in Dests means the source keeps a copy too (a local copy in the lowering).
type Multicast struct {
	Src   int
	Dests Bitmap
	Bytes int64
}

// RelayOptions tune the planner. The zero value is the paper's relay
// multicast without paired relaying.
type RelayOptions struct {
	// Partner[r] is the rank that relays part of r's messages (paired
	// relaying, MultiWrite section 3.1); -1, or a nil slice, for none. A
	// partner is used only for a message whose destinations all lie on the
	// source's node and do not include the partner.
	Partner []int
	// RelayShare is the fraction of a paired message sent through the
	// partner; 0 balances the two paths from link bandwidths.
	RelayShare float64
	// Unicast makes the relay part cross the source -> partner link once
	// per destination (the unicast multipath baseline of MultiWrite sections
	// 3.1 and 6.1), not once.
	Unicast bool
	// NodeTree makes the copies across nodes a binomial tree over nodes
	// (the recursion of section 4.3.3 applied between relays: a relay's
	// part of the bitmap may name other nodes, which it serves through
	// their same-index relays), so a source's NIC port sends ceil(log2 N)
	// copies instead of N-1. Every node's port still receives one copy.
	NodeTree bool
}

// RelayHop is one transfer of a relay tree: From sends its copy to To, and
// To delivers it to every rank of Serves (ascending; To itself included
// when it is a destination), directly or through further hops. Serves is
// the sub-bitmap the copy carries (section 4.1), kept as a rank list.
type RelayHop struct {
	From, To int
	Serves   []int
	Path     Path
	// Parent is the hop that brought the data to From (-1: From is the
	// source). Parents come before their children in RelayPart.Hops.
	Parent int
	// After is an earlier hop from the same holder through the same NIC
	// port, which must have sent before this one starts (-1: none). Copies
	// to relays through one port go one after another, so the first relay
	// gets a whole copy early and forwards it while the next copy is on the
	// wire, instead of every copy arriving at the end of a fair share.
	// Direct writes to final destinations go at once (they forward
	// nothing, and each would pay its startup in turn).
	After int
}

// RelayPart is a byte range of a message and the tree that carries it.
type RelayPart struct {
	Span Span // within the message
	Hops []RelayHop
}

// RelayTree is the plan of one message: one part, or two (direct and
// relayed) under paired relaying.
type RelayTree struct {
	Parts []RelayPart
}

// PlanMulticast builds the relay tree of every message over topology t (see
// the file comment for the rules). elem is the element size: parts never
// split an element. It fails on a rank out of range, a partner that cannot
// serve, or nodes that must talk without rails.
func PlanMulticast(t *topo.Topology, msgs []Multicast, elem int, opt RelayOptions) ([]RelayTree, error) {
	b, err := newTreeBuilder(t, opt)
	if err != nil {
		return nil, err
	}
	out := make([]RelayTree, len(msgs))
	for i, m := range msgs {
		tr, err := b.tree(i, m, elem)
		if err != nil {
			return nil, err
		}
		out[i] = tr.clone()
	}
	return out, nil
}

// clone copies a tree out of the builder's reused buffers.
func (tr RelayTree) clone() RelayTree {
	out := RelayTree{Parts: make([]RelayPart, len(tr.Parts))}
	for i, p := range tr.Parts {
		hops := make([]RelayHop, len(p.Hops))
		for j, h := range p.Hops {
			h.Serves = append([]int(nil), h.Serves...)
			hops[j] = h
		}
		out.Parts[i] = RelayPart{Span: p.Span, Hops: hops}
	}
	return out
}

// treeBuilder holds what the rules need (where ranks are, link bandwidths
// between GPUs of a node for the paired split) and buffers reused from one
// message to the next, so planning P messages of P destinations costs
// O(P^2) time but O(P) memory.
type treeBuilder struct {
	t       *topo.Topology
	opt     RelayOptions
	n       int
	node    []int
	loc     []int
	first   []int // first rank of each node
	bwCache map[[3]int]float64
	railOK  bool
	dests   []int // the current message's destinations, source excluded
	hops    [2][]RelayHop
	parts   []RelayPart
}

func newTreeBuilder(t *topo.Topology, opt RelayOptions) (*treeBuilder, error) {
	b := &treeBuilder{t: t, opt: opt, n: t.NumGPUs(), bwCache: map[[3]int]float64{}, railOK: len(t.Rails) > 0}
	for ni := range t.Nodes {
		b.first = append(b.first, len(b.node))
		for li := range t.Nodes[ni].GPUs {
			b.node = append(b.node, ni)
			b.loc = append(b.loc, li)
		}
	}
	if opt.Partner != nil && len(opt.Partner) != b.n {
		return nil, fmt.Errorf("multiwrite: %d partners for %d ranks", len(opt.Partner), b.n)
	}
	for r, p := range opt.Partner {
		if p >= b.n || p == r || (p >= 0 && b.node[p] != b.node[r]) {
			return nil, fmt.Errorf("multiwrite: partner %d of rank %d: want another rank of the same node, or -1", p, r)
		}
	}
	if opt.RelayShare < 0 || opt.RelayShare >= 1 {
		return nil, fmt.Errorf("multiwrite: relay share %g: want 0 (balanced) or a fraction below 1", opt.RelayShare)
	}
	return b, nil
}

func (b *treeBuilder) rank(node, local int) int { return b.first[node] + local }

// tree plans message i. The result lives in the builder's buffers until
// the next call.
func (b *treeBuilder) tree(i int, m Multicast, elem int) (RelayTree, error) {
	if m.Src < 0 || m.Src >= b.n {
		return RelayTree{}, fmt.Errorf("multiwrite: message %d: source rank %d out of range 0..%d", i, m.Src, b.n-1)
	}
	if m.Bytes < 0 || m.Bytes%int64(elem) != 0 {
		return RelayTree{}, fmt.Errorf("multiwrite: message %d: %d bytes is not a whole number of %d-byte elements", i, m.Bytes, elem)
	}
	b.dests = m.Dests.AppendRanks(b.dests[:0])
	if k := len(b.dests); k > 0 && b.dests[k-1] >= b.n {
		return RelayTree{}, fmt.Errorf("multiwrite: message %d: destination rank %d out of range 0..%d", i, b.dests[k-1], b.n-1)
	}
	for k, r := range b.dests {
		if r == m.Src {
			b.dests = append(b.dests[:k], b.dests[k+1:]...)
			break
		}
	}
	d := b.dests
	b.parts = b.parts[:0]
	whole := Span{0, m.Bytes}
	p := -1
	if b.opt.Partner != nil {
		p = b.opt.Partner[m.Src]
	}
	if p < 0 || len(d) == 0 || b.node[d[0]] != b.node[m.Src] || b.node[d[len(d)-1]] != b.node[m.Src] || slices.Contains(d, p) {
		hops, err := b.fanout(0, m.Src, d)
		if err != nil {
			return RelayTree{}, fmt.Errorf("multiwrite: message %d: %w", i, err)
		}
		b.parts = append(b.parts, RelayPart{Span: whole, Hops: hops})
		return RelayTree{Parts: b.parts}, nil
	}
	// Paired relaying (section 3.1): a direct part and a relay part. All
	// destinations are on the source's node (ranks are node-major, so the
	// first and last decide).
	share := b.opt.RelayShare
	if share == 0 {
		share = b.balancedShare(m.Src, p, d)
	}
	elems := m.Bytes / int64(elem)
	relayElems := int64(math.Round(share * float64(elems)))
	direct := Span{0, (elems - relayElems) * int64(elem)}
	relayed := Span{direct.Len, m.Bytes - direct.Len}
	if direct.Len > 0 {
		hops, err := b.fanout(0, m.Src, d)
		if err != nil {
			return RelayTree{}, fmt.Errorf("multiwrite: message %d: %w", i, err)
		}
		b.parts = append(b.parts, RelayPart{Span: direct, Hops: hops})
	}
	if relayed.Len > 0 {
		b.parts = append(b.parts, RelayPart{Span: relayed, Hops: b.paired(1, m.Src, p, d)})
	}
	return RelayTree{Parts: b.parts}, nil
}

// paired is the relay part's tree (in hop buffer buf): one copy (Unicast:
// one per destination) from s to its partner p, which writes every
// destination directly.
func (b *treeBuilder) paired(buf, s, p int, d []int) []RelayHop {
	hops := b.hops[buf][:0]
	if b.opt.Unicast {
		// The copies share s -> p at once, as the concurrent unicast flows
		// of section 6.2 do (in turn, each would pay its startup in turn:
		// slower at every size in the simulator).
		for j := range d {
			hops = append(hops, RelayHop{From: s, To: p, Serves: d[j : j+1], Parent: -1, After: -1})
			hops = append(hops, RelayHop{From: p, To: d[j], Serves: d[j : j+1], Parent: len(hops) - 1, After: -1})
		}
	} else {
		hops = append(hops, RelayHop{From: s, To: p, Serves: d, Parent: -1, After: -1})
		for j := range d {
			hops = append(hops, RelayHop{From: p, To: d[j], Serves: d[j : j+1], Parent: 0, After: -1})
		}
	}
	b.hops[buf] = hops
	return hops
}

// balancedShare is the relay fraction that makes both paths of a paired
// message finish together: the direct path moves (1-f) at the narrowest
// direct link, the relay path f at the narrowest of s->p and p->d, which
// carries the relay part |D| times under Unicast.
func (b *treeBuilder) balancedShare(s, p int, d []int) float64 {
	direct, relay := math.Inf(1), b.bw(s, p)
	for _, x := range d {
		direct = math.Min(direct, b.bw(s, x))
		relay = math.Min(relay, b.bw(p, x))
	}
	if b.opt.Unicast {
		relay = math.Min(relay, b.bw(s, p)/float64(len(d)))
	}
	if math.IsInf(direct, 1) || direct+relay <= 0 {
		return 0.5
	}
	return relay / (direct + relay)
}

// bw is the bottleneck bandwidth of the intra-node route between ranks x
// and y (same node), in GB/s.
func (b *treeBuilder) bw(x, y int) float64 {
	key := [3]int{b.node[x], b.loc[x], b.loc[y]}
	if v, ok := b.bwCache[key]; ok {
		return v
	}
	nd := &b.t.Nodes[b.node[x]]
	v := 0.0
	if hops, err := nd.Route(topo.GPUEndpoint(b.loc[x]), topo.GPUEndpoint(b.loc[y])); err == nil {
		_, v = nd.PathCost(hops)
	}
	b.bwCache[key] = v
	return v
}

// fanout is the recursive rule of section 4.3.3 at source h for the
// destinations d (ascending, h excluded), into hop buffer buf.
func (b *treeBuilder) fanout(buf, h int, d []int) ([]RelayHop, error) {
	b.hops[buf] = b.hops[buf][:0]
	if err := b.fanoutFrom(buf, h, d, -1); err != nil {
		return nil, err
	}
	return b.hops[buf], nil
}

// fanoutFrom applies the rule at holder h: one copy per remote node to its
// same-index relay, carrying that node's destinations (which the relay
// then serves by the same rule), then a direct write per destination of
// h's own node. Ranks are node-major, so d splits into one run per node.
// Remote nodes are visited starting after h's node, so different sources
// start on different nodes. h itself, if in d, is skipped.
func (b *treeBuilder) fanoutFrom(buf, h int, d []int, parent int) error {
	hn := b.node[h]
	var runs [][3]int // (node, lo, hi): d's run on each node
	for lo := 0; lo < len(d); {
		hi := lo + 1
		for hi < len(d) && b.node[d[hi]] == b.node[d[lo]] {
			hi++
		}
		runs = append(runs, [3]int{b.node[d[lo]], lo, hi})
		lo = hi
	}
	start := sort.Search(len(runs), func(k int) bool { return runs[k][0] > hn })
	var remote [][3]int // the other nodes' runs, in order of distance after hn
	for k := range runs {
		if run := runs[(start+k)%len(runs)]; run[0] != hn {
			remote = append(remote, run)
		}
	}
	lastRail := -1
	// relayHop sends one copy to node m's same-index relay carrying serves,
	// after the previous copy through h's NIC port, and recurses there.
	relayHop := func(m int, serves []int) error {
		path, err := b.railPath(h)
		if err != nil {
			return err
		}
		relay := b.rank(m, b.loc[h]%len(b.t.Nodes[m].GPUs))
		b.hops[buf] = append(b.hops[buf], RelayHop{From: h, To: relay, Serves: serves, Path: path, Parent: parent, After: lastRail})
		lastRail = len(b.hops[buf]) - 1
		return b.fanoutFrom(buf, relay, serves, lastRail)
	}
	for len(remote) > 0 && b.opt.NodeTree {
		// Binomial over the nodes h serves (its own included): the far half
		// goes, as one copy, to the relay of its first node, which serves
		// the rest of that half the same way; h goes on with the near half.
		far := len(remote) - (len(remote)+1)/2
		var serves []int
		for _, run := range remote[far:] {
			serves = append(serves, d[run[1]:run[2]]...)
		}
		slices.Sort(serves)
		if err := relayHop(remote[far][0], serves); err != nil {
			return err
		}
		remote = remote[:far]
	}
	for _, run := range remote {
		if err := relayHop(run[0], d[run[1]:run[2]]); err != nil {
			return err
		}
	}
	for _, run := range runs {
		if run[0] != hn {
			continue
		}
		for j := run[1]; j < run[2]; j++ {
			if d[j] != h {
				b.hops[buf] = append(b.hops[buf], RelayHop{From: h, To: d[j], Serves: d[j : j+1], Parent: parent, After: -1})
			}
		}
	}
	return nil
}

func (b *treeBuilder) railPath(h int) (Path, error) {
	if !b.railOK {
		return Path{}, fmt.Errorf("topology %q has %d nodes but no rails", b.t.Name, len(b.t.Nodes))
	}
	r := b.t.Nodes[b.node[h]].GPUs[b.loc[h]].Rail
	if r < 0 || r > 255 {
		return Path{}, fmt.Errorf("rank %d (node %d GPU %d) has no NIC rail for the same-index relay", h, b.node[h], b.loc[h])
	}
	return Path{Kind: PathRail, Index: uint8(r)}, nil
}
