package team

import "os"

// Device buffers of peers on other nodes go through goring's own host
// staging (ucxmp.Transport.StageRemote) rather than UCX's CUDA pipeline
// where the nodes are joined by TCP only: on the testbed of two nodes of
// two H200s, two 1 Gbit/s rails, the team's allgather of 64 MiB a rank
// took 548 ms staged by goring (the rails' bound) and 2922 ms through
// UCX's cuda_copy over TCP, and the allreduce 276 against 1416 ms
// (docs/netns.md "UCC across the testbed's nodes"). Over RDMA UCX moves
// device memory without host copies (GPUDirect), which staging would only
// slow; so a machine with an RDMA device keeps UCX's path.

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
