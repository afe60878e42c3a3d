package tune

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Claims follow the measured table: goring claims where it was faster
// than every layer present, at a score above tl/cuda's; a machine or team
// the table has no figures for gets no claim.
func TestNodeClaims(t *testing.T) {
	all := NodeClaims("NVIDIA H100 80GB HBM3", 4, []string{"ucp", "self", "cuda", "nccl", "goring"})
	// allgather: faster than both from 256 KiB to 16 MiB (ranges count a
	// whole allgather's result: 4 ranks' blocks); 16 KiB too (23.4
	// against 24.5 and 36.2).
	assert.Contains(t, all, "allgather:cuda:0-262144:41")
	assert.Contains(t, all, "allgather:cuda:1048576-268435456:41")
	assert.Contains(t, all, "reduce_scatter:cuda:1048576-4194304:41")
	assert.NotContains(t, all, "allreduce", "NCCL was faster at every size")

	// Without tl/nccl, goring beats tl/cuda at every measured size of
	// allgather and all but one of reduce_scatter, and allreduce has no
	// peer at all.
	cudaOnly := NodeClaims("NVIDIA H100 80GB HBM3", 4, []string{"ucp", "cuda"})
	assert.Contains(t, cudaOnly, "allgather:cuda:0-536870912:41")
	assert.Contains(t, cudaOnly, "reduce_scatter:cuda:0-262144:41#reduce_scatter:cuda:1048576-134217728:41", "tl/cuda was faster at 256 KiB (30.5 against 31.0)")
	assert.Contains(t, cudaOnly, "allreduce:cuda:0-134217728:41")

	assert.Empty(t, NodeClaims("NVIDIA H200", 4, []string{"cuda"}), "no figures for that GPU")
	assert.Empty(t, NodeClaims("NVIDIA H100 80GB HBM3", 2, []string{"cuda"}), "no figures for that team size")
}
