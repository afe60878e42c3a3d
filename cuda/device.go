package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
)

// Device attributes (CUdevice_attribute values, cuda.h).
const (
	AttrMultiprocessorCount    = 16
	AttrPCIBusID               = 33
	AttrAsyncEngineCount       = 40
	AttrUnifiedAddressing      = 41
	AttrComputeCapabilityMajor = 75
	AttrComputeCapabilityMinor = 76
)

// DeviceCount is the number of CUDA devices the driver shows this process.
func DeviceCount() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.gc_device_count(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Device is one GPU with its primary context retained. Every call made
// through it (and through the buffers, streams and events it creates)
// makes that context current on the calling thread inside the same cgo
// call, so a Device may be used from any goroutine without
// runtime.LockOSThread. Close releases the context.
type Device struct {
	ordinal int
	dev     C.gc_device
	ctx     C.gc_ctx

	mu     sync.Mutex
	closed bool
}

// DeviceName is the product name of device ordinal ("NVIDIA H200"),
// without opening the device (no context is made or retained).
func DeviceName(ordinal int) (string, error) {
	d, err := unopened(ordinal)
	if err != nil {
		return "", err
	}
	return d.Name()
}

// DevicePCIBusID is the PCI address of device ordinal
// ("0000:19:00.0"), without opening the device: two processes see the
// same GPU when their devices have the same address.
func DevicePCIBusID(ordinal int) (string, error) {
	d, err := unopened(ordinal)
	if err != nil {
		return "", err
	}
	return d.PCIBusID()
}

// unopened is device ordinal without a context: enough for the queries
// that take a device handle only.
func unopened(ordinal int) (*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d out of range (this process sees %d): %w", ordinal, n, ErrInvalidDevice)
	}
	d := &Device{ordinal: ordinal}
	if err := check("cuDeviceGet", C.gc_device_get(C.int(ordinal), &d.dev)); err != nil {
		return nil, err
	}
	return d, nil
}

// Open retains the primary context of device ordinal (0-based).
func Open(ordinal int) (*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d out of range (this process sees %d): %w", ordinal, n, ErrInvalidDevice)
	}
	d := &Device{ordinal: ordinal}
	if err := check("cuDeviceGet", C.gc_device_get(C.int(ordinal), &d.dev)); err != nil {
		return nil, err
	}
	if err := check("cuDevicePrimaryCtxRetain", C.gc_primary_ctx_retain(d.dev, &d.ctx)); err != nil {
		return nil, err
	}
	return d, nil
}

// Close releases the primary context. Buffers, streams and events of the
// device should be freed first; the driver destroys the context (and
// everything in it) when its last retain is released.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return check("cuDevicePrimaryCtxRelease", C.gc_primary_ctx_release(d.dev))
}

// context returns the device's context, or ErrFreed after Close.
func (d *Device) context() (C.gc_ctx, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("%w: device %d is closed", ErrFreed, d.ordinal)
	}
	return d.ctx, nil
}

// MakeCurrent makes d's primary context current on the calling OS thread
// and leaves it so, for libraries that work in the current context (UCX's
// cuda_copy and cuda_ipc transports). Package cuda itself never relies on
// it; a caller that needs it locks its goroutine to the thread first
// (runtime.LockOSThread).
func (d *Device) MakeCurrent() error {
	ctx, err := d.context()
	if err != nil {
		return err
	}
	return check("cuCtxSetCurrent", C.gc_ctx_make_current(ctx))
}

// Ordinal is the device's index as the driver numbers it.
func (d *Device) Ordinal() int { return d.ordinal }

// Name is the product name, e.g. "NVIDIA H200".
func (d *Device) Name() (string, error) {
	var buf [256]C.char
	if err := check("cuDeviceGetName", C.gc_device_name(d.dev, &buf[0], C.int(len(buf)))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// PCIBusID is the device's PCI address, "domain:bus:device.function".
func (d *Device) PCIBusID() (string, error) {
	var buf [64]C.char
	if err := check("cuDeviceGetPCIBusId", C.gc_device_pci_bus_id(d.dev, &buf[0], C.int(len(buf)))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// TotalMemoryBytes is the device memory size.
func (d *Device) TotalMemoryBytes() (int64, error) {
	var n C.size_t
	if err := check("cuDeviceTotalMem", C.gc_device_total_mem(d.dev, &n)); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// FreeMemoryBytes is the device memory not yet allocated (cuMemGetInfo).
func (d *Device) FreeMemoryBytes() (int64, error) {
	ctx, err := d.context()
	if err != nil {
		return 0, err
	}
	var free, total C.size_t
	if err := check("cuMemGetInfo", C.gc_mem_get_info(ctx, &free, &total)); err != nil {
		return 0, err
	}
	return int64(free), nil
}

// Attribute reads one CUdevice_attribute (the Attr constants).
func (d *Device) Attribute(attr int) (int, error) {
	var v C.int
	if err := check(fmt.Sprintf("cuDeviceGetAttribute(%d)", attr), C.gc_device_attribute(d.dev, C.int(attr), &v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// SMCount is the number of streaming multiprocessors.
func (d *Device) SMCount() (int, error) { return d.Attribute(AttrMultiprocessorCount) }

// AsyncEngineCount is the number of copy engines that can run copies
// alongside kernels (and each other).
func (d *Device) AsyncEngineCount() (int, error) { return d.Attribute(AttrAsyncEngineCount) }

// UnifiedAddressing reports whether device and host pointers share one
// address space (needed by cuMemcpyPeer with plain pointers and by IPC).
func (d *Device) UnifiedAddressing() (bool, error) {
	v, err := d.Attribute(AttrUnifiedAddressing)
	return v != 0, err
}

// ComputeCapability is (major, minor), e.g. (9, 0) for Hopper.
func (d *Device) ComputeCapability() (major, minor int, err error) {
	if major, err = d.Attribute(AttrComputeCapabilityMajor); err != nil {
		return 0, 0, err
	}
	minor, err = d.Attribute(AttrComputeCapabilityMinor)
	return major, minor, err
}

// CanAccessPeer reports whether this device can map peer's memory
// (cuDeviceCanAccessPeer): NVLink or PCIe peer-to-peer.
func (d *Device) CanAccessPeer(peer *Device) (bool, error) {
	var v C.int
	if err := check("cuDeviceCanAccessPeer", C.gc_device_can_access_peer(d.dev, peer.dev, &v)); err != nil {
		return false, err
	}
	return v != 0, nil
}

// EnablePeerAccess lets this device's context read and write peer's
// memory directly (cuCtxEnablePeerAccess), so peer copies go over NVLink
// without staging. Access is one-way: enable both directions for copies
// both ways. Enabling twice is not an error.
func (d *Device) EnablePeerAccess(peer *Device) error {
	ctx, err := d.context()
	if err != nil {
		return err
	}
	pctx, err := peer.context()
	if err != nil {
		return err
	}
	r := C.gc_ctx_enable_peer_access(ctx, pctx)
	if Result(r) == ErrPeerAlreadyEnabled {
		return nil
	}
	return check("cuCtxEnablePeerAccess", r)
}

// Synchronize waits for all work on the device's context (cuCtxSynchronize).
func (d *Device) Synchronize() error {
	ctx, err := d.context()
	if err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.gc_ctx_synchronize(ctx))
}
