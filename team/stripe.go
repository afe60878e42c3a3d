package team

import (
	"strconv"
	"strings"
)

// maxStripeLanes bounds the lanes a message is striped over (UCX's own
// limit on lanes of one endpoint is larger; a node with more rails than
// this is not one goring has measured).
const maxStripeLanes = 8

// stripeLanes is UCX's MAX_EAGER_LANES for the teams' context: one lane
// per network device that UCX_NET_DEVICES names, when it names several
// and the caller has not set UCX_MAX_EAGER_LANES. Why: with its default
// of one, UCX sends every active message (TCP's whole data path, and the
// bulk of a CUDA buffer staged through host memory) over one device, and
// a node's other rails stay idle; measured on the testbed (docs/netns.md
// "UCC across the testbed's nodes"), a node of two rails carried
// everything on its first. With a lane per rail UCX splits each large
// message over all of them. ok is false where UCX's default stands: no
// list, a single device, "all", or the caller's own setting.
func stripeLanes(netDevices, maxEagerLanes string) (lanes string, ok bool) {
	if maxEagerLanes != "" {
		return "", false
	}
	n := 0
	for _, d := range strings.Split(netDevices, ",") {
		d = strings.TrimSpace(d)
		if d == "all" {
			return "", false
		}
		if d != "" {
			n++
		}
	}
	if n < 2 {
		return "", false
	}
	return strconv.Itoa(min(n, maxStripeLanes)), true
}
