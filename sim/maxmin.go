package sim

// filler computes max-min fair rates by progressive filling, restricted to
// the component of flows and links touched by a change: flows that share
// no link, directly or through other flows, with the flow that started or
// ended keep their rates, so a change costs the size of its component, not
// of the whole network.
type filler struct {
	linkStamp []uint32
	flowStamp []uint32
	stamp     uint32

	links []int32 // the component's links
	flows []int32 // the component's flows
	rates []float64
	fixed []bool

	rem []float64 // per link id: capacity not yet given out
	cnt []int32   // per link id: flows on it not yet fixed
	pos []int32   // per flow slot: index in flows
}

func (fl *filler) init(nLinks int) {
	fl.linkStamp = make([]uint32, nLinks)
	fl.rem = make([]float64, nLinks)
	fl.cnt = make([]int32, nLinks)
}

// collect gathers the component reachable from seed.
func (fl *filler) collect(e *engine, seed []int32) {
	fl.stamp++
	if fl.stamp == 0 { // wrapped: clear the marks
		clear(fl.linkStamp)
		clear(fl.flowStamp)
		fl.stamp = 1
	}
	for len(fl.flowStamp) < len(e.flows) {
		fl.flowStamp = append(fl.flowStamp, 0)
		fl.pos = append(fl.pos, 0)
	}
	fl.links, fl.flows = fl.links[:0], fl.flows[:0]
	for _, l := range seed {
		if fl.linkStamp[l] != fl.stamp {
			fl.linkStamp[l] = fl.stamp
			fl.links = append(fl.links, l)
		}
	}
	for i := 0; i < len(fl.links); i++ {
		for _, fi := range e.onLink[fl.links[i]] {
			if fl.flowStamp[fi] == fl.stamp {
				continue
			}
			fl.flowStamp[fi] = fl.stamp
			fl.pos[fi] = int32(len(fl.flows))
			fl.flows = append(fl.flows, fi)
			for _, l := range e.flows[fi].links {
				if fl.linkStamp[l] != fl.stamp {
					fl.linkStamp[l] = fl.stamp
					fl.links = append(fl.links, l)
				}
			}
		}
	}
}

// solve fills fl.rates (bytes/us, parallel to fl.flows): repeatedly find
// the link whose remaining capacity per unfixed flow is smallest, give that
// share to its unfixed flows, and take it off every link they cross.
func (fl *filler) solve(e *engine) {
	n := len(fl.flows)
	fl.rates = fl.rates[:0]
	fl.fixed = fl.fixed[:0]
	for range n {
		fl.rates = append(fl.rates, 0)
		fl.fixed = append(fl.fixed, false)
	}
	if n == 0 {
		return
	}
	if n == 1 { // a flow alone
		fl.rates[0] = soloRate(e.nw.capBpus, e.flows[fl.flows[0]].links)
		return
	}
	for _, l := range fl.links {
		fl.rem[l] = e.nw.capBpus[l]
		fl.cnt[l] = int32(len(e.onLink[l]))
	}
	left := n
	for left > 0 {
		best, share := int32(-1), 0.0
		for _, l := range fl.links {
			if fl.cnt[l] == 0 {
				continue
			}
			s := fl.rem[l] / float64(fl.cnt[l])
			if best < 0 || s < share {
				best, share = l, s
			}
		}
		if share < 1e-12 {
			share = 1e-12 // rounding: never stall a flow
		}
		for _, fi := range e.onLink[best] {
			i := fl.pos[fi]
			if fl.fixed[i] {
				continue
			}
			fl.fixed[i] = true
			fl.rates[i] = share
			left--
			for _, l := range e.flows[fi].links {
				fl.rem[l] -= share
				fl.cnt[l]--
			}
		}
	}
}

// soloRate is the rate of a flow alone on links (bytes/us, or whatever
// unit capBpus is in): its narrowest link, where a link the route crosses
// k times (a half-duplex link traversed both ways, as a host-staged copy
// through a switch does) gives it a k-th of its capacity, since every
// byte crosses it k times. That is what solve's progressive filling gives
// such a flow among others, which counts each crossing on the link.
func soloRate(capBpus []float64, links []int32) float64 {
	r := 0.0
	for i, l := range links {
		k := 0
		for _, m := range links {
			if m == l {
				k++
			}
		}
		if c := capBpus[l] / float64(k); i == 0 || c < r {
			r = c
		}
	}
	return r
}
