// Package cudaexec joins package cuda to package exec: it gives a rank
// CUDA device memory as exec.Regions, runs the executor's copy and reduce
// steps on that GPU (a stream per rank, a reduction kernel or a copy per
// step, an event per step polled by exec.Call), and stages patterns
// through the host for the benchmark runner (it is a bench.Memory).
//
// Nothing here blocks per step: Local queues the work and records an
// event; Poll reports the steps whose events have completed, in stream
// order. Events are pooled, so a warm Machine allocates nothing per call.
//
//	g, err := cudaexec.Open(0)          // GPU 0; cuda.IsNoDriver(err) without one
//	defer g.Close()
//	src, _ := g.Alloc(1 << 20)          // exec.Region on cuda:0
//	cfg.Local = g.Local()               // the executor's copies and reductions on GPU 0
//
// Engine is the CUDA side of ucx_mp's push protocol: IPC handles of a
// receiver's allocations, their mappings in the sender (cached), copies on
// a stream per (device, peer). Which messages take it, and the messages
// that tell a peer to write or that the bytes are there, are ucx_mp's;
// this package knows nothing of the network.
package cudaexec
