package tune

import "github.com/goring-hpc/goring/topo"

// The layers' costs: every figure the regimes charge per call or per
// message, in one place. Each constant is one measured quantity, in the
// unit its name ends with (US: microseconds), with where it was measured;
// the Layer values below are built from them, and the regimes (regime.go)
// take those values or these constants, never a figure of their own.

// The CUDA figures, measured between processes of one host.
const (
	// GoringPushMessageH100x2US is what goring's push engine pays per
	// transfer (a copy launch and two small host messages): its direct
	// push's fitted startup, 37.4 us between two processes on two H100
	// (docs/gpu.md "One transfer on two H100s").
	GoringPushMessageH100x2US = 37
	// CUDAUCPOverPushUS is what UCX's cuda_ipc rendezvous, tl/ucp's way
	// for a CUDA message, costs beyond goring's push: 126 against 58 us
	// for 8 MiB between two H100 (docs/gpu.md "One transfer on two
	// H100s").
	CUDAUCPOverPushUS = 68
	// CUDAUCPMessageSharedH100US is tl/ucp's cost per CUDA message between
	// two processes sharing one H100: UCX's cuda_ipc rendezvous, about
	// 140 us (docs/gpu.md "goring's own CUDA IPC push").
	CUDAUCPMessageSharedH100US = 140
)

// CUDAUCPMessageH100x2US is tl/ucp's cost per CUDA message between two
// processes on two H100, not measured on its own but derived from the two
// figures of that run: the push's startup plus what the rendezvous costs
// beyond the push (37 + 68 = 105 us).
const CUDAUCPMessageH100x2US = GoringPushMessageH100x2US + CUDAUCPOverPushUS

// The layers' costs on host memory, measured through Open MPI's coll/ucc
// on the 2-core development machine, 2 ranks, back to back (docs/ucc.md
// "Small collectives in C"): a 4-64 B allreduce (one message per rank)
// took 0.31-0.34 us with tl/ucp and 0.36-0.41 us in goring's C path, and
// a 16-float allreduce 3.4-3.7 us in goring's Go path (cpath_max=0). The
// message cost is UCX's, shared by all three; the call costs are the
// rest.
var (
	HostUCP      = Layer{Name: "tl/ucp", CallUS: 0.07, MessageUS: 0.25}
	HostGoringC  = Layer{Name: "goring (C path)", CallUS: 0.13, MessageUS: 0.25}
	HostGoringGo = Layer{Name: "goring (Go path)", CallUS: 3.2, MessageUS: 0.25}
)

// SharedH100OneDevice are the leader engine's figures on one H100
// (OneDevice): the memory rate is the h100-shared4 fit's copy rate (the
// four processes' together, which one context reaches alone) counted as
// bytes read and written; the fixed and per-op parts are two small UCX
// messages and a launch with its event.
var SharedH100OneDevice = OneDevice{CallUS: 30, OpUS: 5, MemGBps: 2 * topo.SharedH100CopyGBps}

// The layers' costs on CUDA memory between processes of one host, a GPU
// each (the figures above, two H100): goring's push per message, tl/ucp's
// the push's plus its rendezvous beyond it. A call costs each layer about
// the same (a few us of host work) next to these. The shared-GPU regime
// charges tl/ucp CUDAUCPMessageSharedH100US instead (SharedGPU).
var (
	CUDAUCP    = Layer{Name: "tl/ucp", CallUS: 5, MessageUS: CUDAUCPMessageH100x2US}
	CUDAGoring = Layer{Name: "goring (push)", CallUS: 5, MessageUS: GoringPushMessageH100x2US}
)
