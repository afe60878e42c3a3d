package detect

import (
	"os"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/goring-hpc/goring/topo"
)

// Detect discovers this machine: its GPUs through NVML, their NUMA and
// socket placement and the NICs through /sys, and returns a validated
// one-node topology named "detected" whose node is named after the host.
// Without an NVIDIA driver it returns a *NoDriverError.
func Detect() (*topo.Topology, error) {
	gpus, err := readGPUs(realNVML{lib: nvml.New()})
	if err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node0"
	}
	return Build("detected", host, gpus, os.DirFS("/sys"))
}
