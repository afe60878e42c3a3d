package tune

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Claims follow the measured table: goring claims where it was faster
// than the layer UCC would otherwise run (tl/cuda's allgather and
// reduce_scatter, tl/nccl's allreduce: the highest default score present
// with the call), at a score above tl/cuda's; a machine or team the table
// has no figures for gets no claim.
func TestNodeClaims(t *testing.T) {
	all := NodeClaims("NVIDIA H100 80GB HBM3", 4, false, []string{"ucp", "self", "cuda", "nccl", "goring"}, nil)
	// tl/cuda is UCC's pick for allgather and reduce_scatter, and goring
	// beat it by the margin at every size; tl/nccl is its pick for
	// allreduce, and NCCL was faster at every size.
	assert.Equal(t, "allgather:cuda:0-2147483647:41#reduce_scatter:cuda:0-536870911:41", all)

	// Without tl/cuda, UCC would run tl/nccl: goring claims allgather at
	// 1 and 4 MiB and from 64 MiB (ranges count a whole allgather's
	// result: 4 ranks' blocks), not at 16 MiB, where NCCL's best run
	// (203.1) beat goring's 219.0; reduce_scatter at 1-4 MiB.
	ncclOnly := NodeClaims("NVIDIA H100 80GB HBM3", 4, false, []string{"ucp", "nccl"}, nil)
	assert.Contains(t, ncclOnly, "allgather:cuda:4194304-67108863:41")
	assert.Contains(t, ncclOnly, "allgather:cuda:268435456-2147483647:41")
	assert.Contains(t, ncclOnly, "reduce_scatter:cuda:1048576-4194303:41")
	assert.NotContains(t, ncclOnly, "allreduce", "NCCL was faster at every size")
	assert.NotContains(t, ncclOnly, "allgather:cuda:0-", "NCCL was faster below 1 MiB")

	// With tl/ucp alone, every measured size.
	ucpOnly := NodeClaims("NVIDIA H100 80GB HBM3", 4, false, []string{"ucp"}, nil)
	assert.Contains(t, ucpOnly, "allreduce:cuda:0-536870911:41")

	// Two H200s with every layer: allgather and reduce_scatter at every
	// size (tl/cuda, UCC's pick, was 1.25-15x slower), allreduce against
	// tl/nccl at every size but 512 KiB (26.0 against 24.5 µs).
	pair := NodeClaims("NVIDIA H200", 2, false, []string{"ucp", "cuda", "nccl", "goring"}, nil)
	assert.Equal(t, "allgather:cuda:0-1073741823:41#allreduce:cuda:0-524287:41#allreduce:cuda:1048576-536870911:41#reduce_scatter:cuda:0-536870911:41", pair)

	// Four H200s with every layer: allgather and reduce_scatter at every
	// size (tl/cuda was 1.1-9.8x slower), allreduce nowhere (tl/nccl was
	// faster or within 5% at every size). With tl/nccl the only GPU
	// layer: allgather at 1 MiB a rank (38.0 against 49.5) and 256 MiB
	// (2232.2 against 2482.7), reduce_scatter nowhere.
	quad := NodeClaims("NVIDIA H200", 4, false, []string{"ucp", "self", "cuda", "nccl", "goring"}, nil)
	assert.Equal(t, "allgather:cuda:0-2147483647:41#reduce_scatter:cuda:0-536870911:41", quad)
	assert.Equal(t, "allgather:cuda:4194304-16777215:41#allgather:cuda:1073741824-2147483647:41",
		NodeClaims("NVIDIA H200", 4, false, []string{"ucp", "nccl"}, nil))

	assert.Empty(t, NodeClaims("NVIDIA H200", 3, false, []string{"cuda"}, nil), "no figures for that team size")
	// Another card of the same generation is another machine: its links
	// (PCIe, NVLink bridges) are not the NVSwitch node measured.
	for _, gpu := range []string{"NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL"} {
		for _, n := range []int{2, 4} {
			assert.Empty(t, NodeClaims(gpu, n, false, []string{"ucp", "cuda", "nccl"}, nil), "no figures for %d of %s", n, gpu)
			assert.Empty(t, NodeClaims(gpu, n, true, []string{"ucp", "cuda", "nccl"}, nil), "no figures for %d on one %s", n, gpu)
		}
	}
	assert.Empty(t, NodeClaims("NVIDIA H100 80GB HBM3", 2, false, []string{"cuda"}, nil), "no figures for that team size")
}

// Ranks sharing one GPU: tl/cuda, UCC's choice with every layer, was
// 11-465x slower than goring's leader at every size measured, so goring
// claims allgather and reduce_scatter at every size of the 2-, 4- and
// 8-rank tables, and nothing on a shape not measured or on a team with a
// GPU a rank that the shared tables would otherwise answer.
func TestSharedGPUClaims(t *testing.T) {
	layers := []string{"ucp", "self", "cuda", "nccl", "goring"}
	assert.Equal(t, "allgather:cuda:0-2147483647:41#reduce_scatter:cuda:0-536870911:41",
		NodeClaims("NVIDIA H200", 4, true, layers, nil))
	assert.Equal(t, "allgather:cuda:0-1073741823:41#reduce_scatter:cuda:0-536870911:41",
		NodeClaims("NVIDIA H200", 2, true, layers, nil))
	assert.Equal(t, "allgather:cuda:0-1073741823:41#reduce_scatter:cuda:0-134217727:41",
		NodeClaims("NVIDIA H200", 8, true, layers, nil))
	assert.Empty(t, NodeClaims("NVIDIA H200", 3, true, layers, nil), "no figures for 3 ranks on one GPU")
	assert.Empty(t, NodeClaims("NVIDIA H100 80GB HBM3", 4, true, layers, nil), "no figures for a shared H100")
	assert.Contains(t, NodeClaims("NVIDIA H200", 2, false, layers, nil), "allreduce:cuda:1048576-536870911:41",
		"a GPU a rank: the two-GPU table's claims (the shared one claims no allreduce)")
}
