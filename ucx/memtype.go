package ucx

import (
	"fmt"
	"strings"
)

// MemoryType says where a buffer lives (ucs_memory_type_t). The values are
// UCX's ABI; UCX 1.13 defines host through ROCm managed, later releases
// (such as 1.16 on the GPU machine) add RDMA and the oneAPI Level Zero kinds.
type MemoryType int

const (
	MemHost         MemoryType = 0 // ordinary system memory
	MemCUDA         MemoryType = 1 // NVIDIA device memory (cudaMalloc)
	MemCUDAManaged  MemoryType = 2 // NVIDIA managed (unified) memory
	MemROCm         MemoryType = 3 // AMD device memory
	MemROCmManaged  MemoryType = 4 // AMD managed memory
	MemRDMA         MemoryType = 5 // RDMA device memory (UCX 1.14 and later)
	MemZEHost       MemoryType = 6 // Level Zero host memory (UCX 1.14 and later)
	MemZEDevice     MemoryType = 7 // Level Zero device memory (UCX 1.14 and later)
	MemZEManaged    MemoryType = 8 // Level Zero shared memory (UCX 1.14 and later)
	MemUnknown      MemoryType = -1
	memTypeNamedEnd            = 9
)

var memTypeNames = [memTypeNamedEnd]string{
	"host", "cuda", "cuda-managed", "rocm", "rocm-managed", "rdma", "ze-host", "ze-device", "ze-managed",
}

// String is the short name used in flags and JSON, such as "cuda-managed".
func (m MemoryType) String() string {
	if m >= 0 && m < memTypeNamedEnd {
		return memTypeNames[m]
	}
	if m == MemUnknown {
		return "unknown"
	}
	return fmt.Sprintf("mem(%d)", int(m))
}

// MemoryTypes is a set of memory types, bit i for MemoryType(i), as in
// ucp_context_attr_t.memory_types.
type MemoryTypes uint64

// Has reports whether m is in the set.
func (s MemoryTypes) Has(m MemoryType) bool {
	return m >= 0 && m < 64 && s&(1<<uint(m)) != 0
}

// List returns the members in ascending order.
func (s MemoryTypes) List() []MemoryType {
	var out []MemoryType
	for i := 0; i < 64; i++ {
		if s&(1<<uint(i)) != 0 {
			out = append(out, MemoryType(i))
		}
	}
	return out
}

// String joins the member names with commas, e.g. "host,cuda".
func (s MemoryTypes) String() string {
	var b strings.Builder
	for i, m := range s.List() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.String())
	}
	return b.String()
}
