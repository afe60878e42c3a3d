package topo

// Schema names the JSON form of a Topology.
const Schema = "goring.topo/v1"

// LinkKind says what carries a link's bytes.
type LinkKind string

// Link kinds. A link joins two endpoints of one node (see Link.A).
const (
	NVLink   LinkKind = "nvlink"   // direct GPU-GPU NVLink bundle
	NVSwitch LinkKind = "nvswitch" // GPU to an NVSwitch fabric ("switch:N")
	PCIe     LinkKind = "pcie"     // GPU or NIC to its socket's root complex ("host:S")
	UPI      LinkKind = "upi"      // socket to socket (UPI, xGMI, Infinity Fabric)
	NIC      LinkKind = "nic"      // a NIC's port onto its rail's network
)

// Topology describes a cluster: nodes, and the NIC rails that join them.
//
// Ranks map onto GPUs node by node: rank = node*GPUsPerNode + local index,
// the block placement Open MPI uses by default.
type Topology struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
	Nodes  []Node `json:"nodes"`
	// Rails are the inter-node networks, one per NIC index. Rail r joins NIC
	// r of every node through a non-blocking switch.
	Rails []Rail `json:"rails,omitempty"`
}

// Node is one host: its GPUs, sockets, NICs and the links between them.
type Node struct {
	Name    string `json:"name"`
	Sockets int    `json:"sockets"`
	// NUMANodes is the node's NUMA node count when known (0: unknown; then
	// a GPU's NUMA is only checked to be non-negative).
	NUMANodes int       `json:"numa_nodes,omitempty"`
	GPUs      []GPU     `json:"gpus"`
	NICs      []NICPort `json:"nics,omitempty"`
	Links     []Link    `json:"links"`
}

// GPU is one accelerator of a node.
type GPU struct {
	Index    int    `json:"index"` // local index within the node, 0..len(GPUs)-1
	Model    string `json:"model,omitempty"`
	UUID     string `json:"uuid,omitempty"`
	Socket   int    `json:"socket"`
	NUMA     int    `json:"numa"`
	PCIBusID string `json:"pci_bus_id,omitempty"`
	// Rail is the index of the NIC closest to this GPU (-1: none).
	Rail int `json:"rail"`
	// Share is how many processes time-share the physical GPU this entry
	// stands for, each of them a GPU entry of its own (0 or 1: one; see
	// SharedGPU). The simulator gives each 1/Share of the GPU's copy and
	// reduction rates.
	Share int `json:"share,omitempty"`
}

// NoRail is GPU.Rail for a GPU with no NIC near it (or a node with none).
const NoRail = -1

// NICPort is one network adapter of a node, attached to a socket.
type NICPort struct {
	Index  int `json:"index"` // equals the rail it serves
	Socket int `json:"socket"`
}

// Link joins two endpoints of a node. Endpoints are written "gpu:N",
// "host:S" (socket S: its root complex and host memory), "switch:N" (an
// NVSwitch plane) and "nic:N".
//
// Count links of the same kind run in parallel; BetaGBps is the bandwidth of
// ONE of them in one direction (GB/s = 1e9 bytes/s), so the bundle carries
// Count*BetaGBps each way when FullDuplex, and that in total otherwise.
// AlphaUS is the startup cost of a transfer crossing the link.
type Link struct {
	Kind       LinkKind `json:"kind"`
	A          string   `json:"a"`
	B          string   `json:"b"`
	Count      int      `json:"count"`
	AlphaUS    float64  `json:"alpha_us"`
	BetaGBps   float64  `json:"beta_GBps"`
	FullDuplex bool     `json:"full_duplex"`
}

// Rail is one inter-node network: NIC r of every node, one switch.
type Rail struct {
	Index    int     `json:"index"`
	AlphaUS  float64 `json:"alpha_us"`
	BetaGBps float64 `json:"beta_GBps"` // per NIC port, per direction
}

// BandwidthGBps is the bundle's bandwidth in one direction.
func (l Link) BandwidthGBps() float64 { return float64(l.Count) * l.BetaGBps }

// NumNodes is the number of nodes.
func (t *Topology) NumNodes() int { return len(t.Nodes) }

// NumGPUs is the number of GPUs in the cluster, which is the number of ranks.
func (t *Topology) NumGPUs() int {
	n := 0
	for i := range t.Nodes {
		n += len(t.Nodes[i].GPUs)
	}
	return n
}

// GPUsPerNode returns the GPU count of every node, or 0 if nodes differ.
func (t *Topology) GPUsPerNode() int {
	if len(t.Nodes) == 0 {
		return 0
	}
	g := len(t.Nodes[0].GPUs)
	for i := range t.Nodes {
		if len(t.Nodes[i].GPUs) != g {
			return 0
		}
	}
	return g
}

// Locate maps a rank to its node and local index (block placement). It
// returns ok=false for a rank outside the cluster.
func (t *Topology) Locate(rank int) (node, local int, ok bool) {
	if rank < 0 {
		return 0, 0, false
	}
	for i := range t.Nodes {
		n := len(t.Nodes[i].GPUs)
		if rank < n {
			return i, rank, true
		}
		rank -= n
	}
	return 0, 0, false
}
