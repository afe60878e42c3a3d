package topo

import (
	"fmt"
	"strconv"
	"strings"
)

// Endpoint kinds: the part of an endpoint string before the colon.
const (
	KindGPU    = "gpu"    // a GPU of the node, by local index
	KindHost   = "host"   // a socket: its root complex and host memory
	KindSwitch = "switch" // an NVSwitch plane
	KindNIC    = "nic"    // a network adapter, by NICPort.Index
	KindRail   = "rail"   // the node's port onto rail r's switch (far end of nic:r)
)

// maxEndpointIndex bounds endpoint indices so that a hostile file cannot
// make a reader allocate per index.
const maxEndpointIndex = 1 << 20

// GPUEndpoint names GPU i of a node: "gpu:i".
func GPUEndpoint(i int) string { return KindGPU + ":" + strconv.Itoa(i) }

// HostEndpoint names socket s of a node: "host:s".
func HostEndpoint(s int) string { return KindHost + ":" + strconv.Itoa(s) }

// SwitchEndpoint names NVSwitch plane n of a node: "switch:n".
func SwitchEndpoint(n int) string { return KindSwitch + ":" + strconv.Itoa(n) }

// NICEndpoint names NIC r of a node: "nic:r".
func NICEndpoint(r int) string { return KindNIC + ":" + strconv.Itoa(r) }

// RailEndpoint names the node's port onto rail r: "rail:r". A link of kind
// "nic" joins "nic:r" to it; the rail network itself is Topology.Rails[r].
func RailEndpoint(r int) string { return KindRail + ":" + strconv.Itoa(r) }

// ParseEndpoint splits an endpoint string such as "gpu:3" into its kind and
// index. The kind is one of gpu, host, switch, nic, rail; the index is a
// plain decimal number (no sign, no leading zeros).
func ParseEndpoint(s string) (kind string, index int, err error) {
	k, num, ok := strings.Cut(s, ":")
	if !ok {
		return "", 0, fmt.Errorf("endpoint %q: want KIND:INDEX (gpu:N, host:S, switch:N, nic:N, rail:N)", s)
	}
	switch k {
	case KindGPU, KindHost, KindSwitch, KindNIC, KindRail:
	default:
		return "", 0, fmt.Errorf("endpoint %q: unknown kind %q (want gpu, host, switch, nic or rail)", s, k)
	}
	if num == "" || len(num) > 7 || (len(num) > 1 && num[0] == '0') {
		return "", 0, fmt.Errorf("endpoint %q: index %q is not a plain decimal number", s, num)
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return "", 0, fmt.Errorf("endpoint %q: index %q is not a plain decimal number", s, num)
		}
	}
	i, _ := strconv.Atoi(num)
	if i >= maxEndpointIndex {
		return "", 0, fmt.Errorf("endpoint %q: index %d is too large", s, i)
	}
	return k, i, nil
}

// DirectLinks returns the indices (into n.Links, ascending) of the links
// joining exactly a and b, in either orientation.
func (n *Node) DirectLinks(a, b string) []int {
	var out []int
	for i, l := range n.Links {
		if (l.A == a && l.B == b) || (l.A == b && l.B == a) {
			out = append(out, i)
		}
	}
	return out
}
