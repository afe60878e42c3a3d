package team

import "os"

// Device buffers of peers on other nodes go through goring's own host
// staging (ucxmp.Transport.StageRemote) rather than UCX's CUDA pipeline
// where the nodes are joined by TCP only: on the GPU testbed the team's
// allgather and allreduce ran about 5x faster staged, at the rails' bound
// (docs/netns.md "The users' stacks across the nodes" has the runs). Over
// RDMA UCX moves device memory without host copies (GPUDirect), which
// staging would only slow; so a machine with an RDMA device keeps UCX's
// path.

// stageRemoteEnv forces the choice: "1" stages, "0" leaves device
// messages to UCX; unset or anything else, stageRemoteWanted decides.
const stageRemoteEnv = "GORING_STAGE_REMOTE"

// stageRemoteWanted says whether a team spanning nodes stages its device
// messages to the other nodes: as env says, else where this machine has
// no RDMA device (rdma: how many /sys/class/infiniband lists).
func stageRemoteWanted(env string, rdma int) bool {
	switch env {
	case "1":
		return true
	case "0":
		return false
	}
	return rdma == 0
}

// rdmaDevices is how many RDMA devices (InfiniBand, RoCE) the kernel lists.
func rdmaDevices() int {
	entries, _ := os.ReadDir("/sys/class/infiniband")
	return len(entries)
}
