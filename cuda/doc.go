// Package cuda is goring's only binding to the CUDA driver API (libcuda):
// devices and their primary contexts, device and pinned host memory,
// synchronous and stream-ordered copies (host, device, peer over NVLink),
// streams and events, peer access and IPC handles that let another process
// map a buffer, and the embedded kernels: reductions (kernels/reduce.cu),
// the node collectives (kernels/node.cu, node.go), the copy list
// (kernels/copylist.cu, copylist.go: many independent copies in one
// launch) and the reduce list (kernels/reducelist.cu, copylist.go: many
// independent reductions in one launch).
//
// # Loading
//
// libcuda.so.1 (or $GORING_LIBCUDA) is opened with dlopen at run time and
// called through function pointers (shim.c), resolving the versioned entry
// points (cuMemAlloc_v2, cuMemcpyDtoH_v2, cuDevicePrimaryCtxRelease_v2,
// ...) that 64-bit sizes need. The types of the few driver structures are
// declared in shim.h, so goring builds with no CUDA headers or toolkit and
// starts on a machine without a GPU. Load (called by every constructor)
// then calls cuInit(0). Without a driver it returns a *NoDriverError:
//
//	no CUDA driver: libcuda.so.1: cannot open shared object file: No such file or directory (GPU paths need the NVIDIA driver; set GORING_LIBCUDA to its libcuda.so.1)
//
// Callers and tests skip GPU work on IsNoDriver(err); any other error from
// Load is a driver that is present and broken, and must fail loudly.
//
// # Contexts and threads
//
// A CUDA context is current per OS thread, and goroutines move between
// threads. Rather than lock goroutines to threads, every C wrapper takes
// the context and calls cuCtxSetCurrent before its driver call, inside the
// same cgo call (which runs on one thread from start to end). Go code thus
// never relies on a current context, any goroutine may use any Device, and
// the cost is one cuCtxSetCurrent (tens of nanoseconds) per call. Only
// primary contexts are used (cuDevicePrimaryCtxRetain), the same ones the
// CUDA runtime, PyTorch and UCX's cuda transports use, so memory and
// streams can be shared with them.
//
// # Tutorial
//
//	d0, err := cuda.Open(0)              // retains GPU 0's primary context
//	if cuda.IsNoDriver(err) { /* no GPU here: skip */ }
//	defer d0.Close()
//	d1, _ := cuda.Open(1)
//	_ = d0.EnablePeerAccess(d1)          // direct NVLink copies 0 <-> 1
//	_ = d1.EnablePeerAccess(d0)
//
//	a, _ := d0.Alloc(64 << 20)           // device memory, bytes
//	b, _ := d1.Alloc(64 << 20)
//	_ = a.CopyFromHost(0, data)          // synchronous, Go memory
//	s, _ := d0.NewStream()
//	start, _ := d0.NewEvent(true)
//	end, _ := d0.NewEvent(true)
//	_ = start.Record(s)
//	_ = cuda.CopyAsync(s, b, 0, a, 0, a.Len()) // cuMemcpyPeerAsync on GPU 0's stream
//	_ = end.Record(s)
//	_ = end.Synchronize()
//	t, _ := cuda.Elapsed(start, end)     // GPU time of the copy
//
// Async copies from or to the host take a HostBuffer (pinned, from
// AllocHost), never Go memory, which the driver would read after the call
// returned. Buffers hand their DevicePtr to other libraries (UCX with a
// CUDA memory type) and to kernels; Go never dereferences it.
//
// # IPC
//
// A rank exports a buffer with Buffer.IPCHandle (64 bytes; String gives
// hex) and sends it with the length over the bootstrap; a rank in another
// process maps it with Device.OpenIPC and copies from or to it like any
// Buffer. The exporter keeps the allocation alive until every importer
// has freed its mapping.
//
// # Errors
//
// Driver failures are Result values (CUresult) wrapped with the call's
// name: "cuda: cuMemAlloc(1024 bytes on device 0): CUDA_ERROR_OUT_OF_MEMORY:
// out of memory", with the driver's own name and text (cuGetErrorName,
// cuGetErrorString); test them with errors.Is(err, cuda.ErrOutOfMemory).
// Arguments are checked in Go first: zero-length allocations
// (ErrZeroLength), offsets and lengths outside a buffer (ErrOutOfRange),
// use of a freed buffer, destroyed stream or closed device (ErrFreed), a
// stream of the wrong device (ErrDeviceMismatch), a device ordinal out of
// range (ErrInvalidDevice), all before any driver call.
package cuda
