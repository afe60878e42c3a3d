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
	// allgather: at least 5% faster than both at 1 and 4 MiB and from
	// 64 MiB (ranges count a whole allgather's result: 4 ranks' blocks);
	// not at 16 MiB, where NCCL's best run (203.1) beat goring's 219.0.
	assert.Contains(t, all, "allgather:cuda:4194304-67108864:41")
	assert.Contains(t, all, "allgather:cuda:268435456-2147483648:41")
	assert.Contains(t, all, "reduce_scatter:cuda:1048576-4194304:41")
	assert.NotContains(t, all, "allreduce", "NCCL was faster at every size")
	assert.NotContains(t, all, "allgather:cuda:0-", "NCCL was faster below 1 MiB")

	// Without tl/nccl, goring beats tl/cuda by the margin at every
	// measured size of allgather and reduce_scatter, and allreduce has no
	// peer at all.
	cudaOnly := NodeClaims("NVIDIA H100 80GB HBM3", 4, []string{"ucp", "cuda"})
	assert.Contains(t, cudaOnly, "allgather:cuda:0-2147483648:41")
	assert.Contains(t, cudaOnly, "reduce_scatter:cuda:0-536870912:41")
	assert.Contains(t, cudaOnly, "allreduce:cuda:0-536870912:41")

	// Two H200s: from 4 MiB, where both runs of goring beat both of
	// NCCL's by the margin; allreduce not at 64 MiB (250.9 against NCCL's
	// 261.6 misses 5%) nor 256 MiB, reduce_scatter not at 256 MiB.
	pair := NodeClaims("NVIDIA H200", 2, []string{"ucp", "cuda", "nccl", "goring"})
	assert.Equal(t, "allgather:cuda:8388608-1073741824:41#allreduce:cuda:4194304-67108864:41#reduce_scatter:cuda:4194304-268435456:41", pair)

	assert.Empty(t, NodeClaims("NVIDIA H200", 4, []string{"cuda"}), "no figures for that team size")
	assert.Empty(t, NodeClaims("NVIDIA H100 80GB HBM3", 2, []string{"cuda"}), "no figures for that team size")
}
