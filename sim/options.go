package sim

import (
	"strings"

	"github.com/goring-hpc/goring/topo"
)

// Options tune the simulator. The zero value is the default model.
type Options struct {
	// CopyGBps is the rate of a local copy (bytes copied per second / 1e9);
	// 0 takes it from the GPU model (see MemoryGBps).
	CopyGBps float64
	// ReduceGBps is the rate of a local reduction in bytes of result per
	// second / 1e9; 0 takes it from the GPU model.
	ReduceGBps float64
	// LaunchUS is the startup of every local copy or reduction (a kernel or
	// cudaMemcpyAsync launch); 0 means DefaultLaunchUS, negative means none.
	LaunchUS float64
	// MessageUS is what the collective layer's software adds to every
	// transfer between two ranks before its bytes move (posting, matching,
	// a rendezvous), on top of the links' startups; 0: nothing. Two layers
	// running the same algorithm on the same links differ by it (package
	// tune).
	MessageUS float64
	// CopyEngineSerial makes each GPU's copy engine carry one outgoing
	// intra-node transfer at a time (others queue, in the order they became
	// ready). Parallel Rings section III-C blames this exclusive access for the
	// "serialisation" it observes on inter-socket nodes. Inter-node sends are
	// moved by the NIC's DMA engine and are not serialised.
	CopyEngineSerial bool
	// Timeline records the start and end of every step in Result.Steps.
	// It costs 16 bytes per step, so large runs leave it off.
	Timeline bool
	// Trace records every transfer with the links it shared in
	// Result.Transfers (for congestion analysis of small runs).
	Trace bool
	// WorkerGBps > 0 models the host worker that drives each lane of each
	// rank (lanes.go): its transfers and local steps cross a worker link
	// of this rate. 0: not modelled.
	WorkerGBps float64
	// NodeCores > 0 (with WorkerGBps) bounds a node's workers together to
	// NodeCores workers' rate: the CPU cores they share.
	NodeCores int
	// LanesOnRails sends lane w's inter-node traffic over rail w (modulo
	// the topology's rails) where a step names no path: each lane's UCX
	// worker bound to a rail of its own, as GPU i owns HCA i in Parallel
	// Rings. Off: every lane takes its GPU's rail.
	LanesOnRails bool
}

// DefaultLaunchUS is the default startup of a local copy or reduction: a
// CUDA kernel or async memcpy launch costs a few microseconds (NVIDIA's
// CUDA C++ Best Practices Guide quotes launch overheads of several us).
const DefaultLaunchUS = 3.0

// memoryEfficiency is the share of peak HBM bandwidth a streaming kernel
// reaches (STREAM-like copies on H100/A100 reach roughly 85–92% of peak).
const memoryEfficiency = 0.9

// hbmPeakGBps maps a GPU model (a substring, matched case-insensitively) to
// its peak memory bandwidth from the vendor data sheets:
// H200 141 GB HBM3e 4.8 TB/s; H100 SXM5 HBM3 3.35 TB/s; A100 80GB SXM
// HBM2e 2.039 TB/s; A30 HBM2 933 GB/s; V100 SXM2 HBM2 900 GB/s.
var hbmPeakGBps = []struct {
	model string
	GBps  float64
}{
	{"h200", 4800},
	{"h100", 3350},
	{"a100", 2039},
	{"a30", 933},
	{"v100", 900},
}

// defaultPeakGBps is used for a GPU of unknown model: about an H100's copy
// rate of 1.5 TB/s, a typical figure for current data-centre GPUs.
const defaultPeakGBps = 3350

// MemoryGBps returns the peak memory bandwidth assumed for a GPU model.
func MemoryGBps(model string) float64 {
	m := strings.ToLower(model)
	for _, e := range hbmPeakGBps {
		if strings.Contains(m, e.model) {
			return e.GBps
		}
	}
	return defaultPeakGBps
}

// copyRates returns, per global GPU, the copy and reduce rates in GB/s. A
// copy reads and writes every byte (2 memory passes); a reduction reads two
// operands and writes one (3 passes).
func (o *Options) copyRates(t *topo.Topology) (copyGBps, reduceGBps []float64) {
	for ni := range t.Nodes {
		for _, g := range t.Nodes[ni].GPUs {
			peak := MemoryGBps(g.Model) * memoryEfficiency
			if g.Share > 1 { // processes time-sharing one GPU (topo.SharedGPU)
				peak /= float64(g.Share)
			}
			c, r := peak/2, peak/3
			if o.CopyGBps > 0 {
				c = o.CopyGBps
			}
			if o.ReduceGBps > 0 {
				r = o.ReduceGBps
			}
			copyGBps = append(copyGBps, c)
			reduceGBps = append(reduceGBps, r)
		}
	}
	return copyGBps, reduceGBps
}

func (o *Options) launchUS() float64 {
	switch {
	case o.LaunchUS < 0:
		return 0
	case o.LaunchUS == 0:
		return DefaultLaunchUS
	}
	return o.LaunchUS
}
