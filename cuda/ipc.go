package cuda

/*
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/hex"
	"fmt"
	"unsafe"
)

// IPCHandle names a device allocation so that another process on the same
// host can map it (CUipcMemHandle: 64 opaque bytes). It carries no length:
// the exporting side must send the length alongside, and the importer must
// not trust it beyond what it expects.
type IPCHandle [64]byte

// String is the handle in hex (128 characters), e.g. for an environment
// variable or a bootstrap message.
func (h IPCHandle) String() string { return hex.EncodeToString(h[:]) }

// ParseIPCHandle reads a handle written by String.
func ParseIPCHandle(s string) (IPCHandle, error) {
	var h IPCHandle
	b, err := hex.DecodeString(s)
	if err != nil {
		return h, fmt.Errorf("cuda: IPC handle: %w", err)
	}
	if len(b) != len(h) {
		return h, fmt.Errorf("cuda: IPC handle: %d bytes, want %d", len(b), len(h))
	}
	copy(h[:], b)
	return h, nil
}

// IPCHandle exports b (cuIpcGetMemHandle). b must come from Alloc: the
// handle names the whole allocation, which stays valid for importers until
// b is freed.
func (b *Buffer) IPCHandle() (IPCHandle, error) {
	var h IPCHandle
	if b.ipc {
		return h, fmt.Errorf("cuda: cannot re-export an IPC mapping: %w", ErrInvalidValue)
	}
	ctx, p, err := b.live()
	if err != nil {
		return h, err
	}
	var ch C.gc_ipc_handle
	if err := check("cuIpcGetMemHandle", C.gc_ipc_get_mem_handle(ctx, &ch, p)); err != nil {
		return h, err
	}
	C.memcpy(unsafe.Pointer(&h[0]), unsafe.Pointer(&ch), C.size_t(len(h)))
	return h, nil
}

const ipcLazyEnablePeerAccess = 0x1 // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS

// OpenIPC maps an allocation exported by another process into d's context
// (cuIpcOpenMemHandle) and returns it as a Buffer of bytes bytes, the
// length the exporter announced; Free unmaps it. A process cannot open its
// own handles (the driver refuses), and bytes larger than the real
// allocation makes every later access a fault, so take it only from a
// trusted peer and check it against what the collective expects.
func (d *Device) OpenIPC(h IPCHandle, bytes int) (*Buffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("%w: IPC mapping of %d bytes", ErrZeroLength, bytes)
	}
	ctx, err := d.context()
	if err != nil {
		return nil, err
	}
	var ch C.gc_ipc_handle
	C.memcpy(unsafe.Pointer(&ch), unsafe.Pointer(&h[0]), C.size_t(len(h)))
	var p C.gc_dptr
	if err := check("cuIpcOpenMemHandle", C.gc_ipc_open_mem_handle(ctx, &p, ch, ipcLazyEnablePeerAccess)); err != nil {
		return nil, err
	}
	return &Buffer{dev: d, ptr: DevicePtr(p), bytes: bytes, ipc: true}, nil
}
