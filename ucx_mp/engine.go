package ucxmp

import (
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// MaxKeyLen bounds DeviceEngine.Export's key: it travels in the
// clear-to-send message, whose size is fixed.
const MaxKeyLen = 128

// DeviceEngine moves device memory between processes of one host without
// handing the bytes to UCX: the receiver exports its buffer, the sender
// maps it and copies into it itself (a push), then tells the receiver.
// UCX carries only two small host messages per transfer. Package cudaexec
// implements it for CUDA (IPC handles and copies on streams); package
// exec/fakedev for the tests.
//
// The engine is called from the transport's goroutine only.
type DeviceEngine interface {
	// Export names the allocation that holds r so that a peer process
	// can map it: an opaque key of at most MaxKeyLen bytes, and r's
	// offset in the allocation. An error means r cannot be exported (a
	// pool allocation, say); the transfer then goes through UCX.
	Export(r exec.Region) (key []byte, off int64, err error)
	// Start begins copying src into peer's memory named by key, at off,
	// src.Len() bytes, and returns a ticket for Done. The mapping of the
	// peer's allocation is cached; path is the step's routing hint, with
	// the step's load where the program was annotated
	// (sched.AnnotateLoads), for an engine that splits transfers.
	Start(peer int, key []byte, off int64, src exec.Region, path sched.Path) (ticket uint64, err error)
	// Done reports whether the copy of ticket has finished, so the bytes
	// are in the peer's memory. After true, or an error, the ticket is
	// spent.
	Done(ticket uint64) (bool, error)
	// Finish waits until the copy of ticket has finished and spends the
	// ticket (the failure path: afterwards no copy touches its buffers).
	Finish(ticket uint64) error
}
