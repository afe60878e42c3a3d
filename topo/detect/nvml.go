package detect

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// device is the part of an NVML device handle detect reads; nvml.Device
// has these methods, and tests fake them.
type device interface {
	GetName() (string, nvml.Return)
	GetUUID() (string, nvml.Return)
	GetPciInfo() (nvml.PciInfo, nvml.Return)
	GetMaxPcieLinkGeneration() (int, nvml.Return)
	GetMaxPcieLinkWidth() (int, nvml.Return)
	GetNvLinkState(link int) (nvml.EnableState, nvml.Return)
	GetNvLinkRemotePciInfo(link int) (nvml.PciInfo, nvml.Return)
	GetNvLinkVersion(link int) (uint32, nvml.Return)
	GetNvLinkRemoteDeviceType(link int) (nvml.IntNvLinkDeviceType, nvml.Return)
}

// library is the part of NVML detect calls.
type library interface {
	Init() nvml.Return
	Shutdown() nvml.Return
	DeviceGetCount() (int, nvml.Return)
	device(i int) (device, nvml.Return)
	// nvlinkP2P says whether GPUs i and j can talk peer to peer over NVLink.
	nvlinkP2P(i, j int) (bool, nvml.Return)
}

// realNVML is libnvidia-ml, loaded with dlopen by go-nvml at Init.
type realNVML struct{ lib nvml.Interface }

func (r realNVML) Init() nvml.Return                  { return r.lib.Init() }
func (r realNVML) Shutdown() nvml.Return              { return r.lib.Shutdown() }
func (r realNVML) DeviceGetCount() (int, nvml.Return) { return r.lib.DeviceGetCount() }
func (r realNVML) device(i int) (device, nvml.Return) {
	d, ret := r.lib.DeviceGetHandleByIndex(i)
	return d, ret
}
func (r realNVML) nvlinkP2P(i, j int) (bool, nvml.Return) {
	a, ret := r.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return false, ret
	}
	b, ret := r.lib.DeviceGetHandleByIndex(j)
	if ret != nvml.SUCCESS {
		return false, ret
	}
	st, ret := r.lib.DeviceGetP2PStatus(a, b, nvml.P2P_CAPS_INDEX_NVLINK)
	return st == nvml.P2P_STATUS_OK, ret
}

// NoDriverError says NVML could not start: no libnvidia-ml, or no driver
// behind it. The CLI turns it into exit status 3.
type NoDriverError struct{ Cause error }

func (e *NoDriverError) Error() string { return fmt.Sprintf("no NVIDIA driver found (%v)", e.Cause) }
func (e *NoDriverError) Unwrap() error { return e.Cause }

// IsNoDriver reports whether err is (or wraps) a NoDriverError.
func IsNoDriver(err error) bool {
	var nd *NoDriverError
	return errors.As(err, &nd)
}

// readGPUs asks NVML for every GPU: name, UUID, PCI bus id, PCIe
// capability and active NVLinks with their far ends and versions.
func readGPUs(lib library) (gpus []GPUInfo, err error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, &NoDriverError{Cause: fmt.Errorf("nvml init: %s", nvmlErr(ret))}
	}
	defer func() {
		if ret := lib.Shutdown(); ret != nvml.SUCCESS && err == nil {
			err = fmt.Errorf("nvml shutdown: %s", nvmlErr(ret))
		}
	}()
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml device count: %s", nvmlErr(ret))
	}
	for i := 0; i < count; i++ {
		d, ret := lib.device(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvml GPU %d: handle: %s", i, nvmlErr(ret))
		}
		var g GPUInfo
		if g.Name, ret = d.GetName(); ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvml GPU %d: name: %s", i, nvmlErr(ret))
		}
		if g.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvml GPU %d: UUID: %s", i, nvmlErr(ret))
		}
		pci, ret := d.GetPciInfo()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvml GPU %d: PCI info: %s", i, nvmlErr(ret))
		}
		g.PCIBusID = busID(pci)
		// PCIe capability is optional: Build falls back to Gen4 x16.
		if gen, ret := d.GetMaxPcieLinkGeneration(); ret == nvml.SUCCESS {
			g.PCIeGen = gen
		}
		if w, ret := d.GetMaxPcieLinkWidth(); ret == nvml.SUCCESS {
			g.PCIeWidth = w
		}
		for l := 0; l < nvml.NVLINK_MAX_LINKS; l++ {
			state, ret := d.GetNvLinkState(l)
			if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
				// No NVLink on this GPU, or no link with this number.
				continue
			}
			if ret != nvml.SUCCESS || state != nvml.FEATURE_ENABLED {
				continue
			}
			remote, ret := d.GetNvLinkRemotePciInfo(l)
			if ret != nvml.SUCCESS {
				continue
			}
			version, ret := d.GetNvLinkVersion(l)
			if ret != nvml.SUCCESS {
				version = 0
			}
			info := NVLinkInfo{Link: l, RemoteBusID: busID(remote), Version: version}
			if t, ret := d.GetNvLinkRemoteDeviceType(l); ret == nvml.SUCCESS {
				switch t {
				case nvml.NVLINK_DEVICE_TYPE_GPU:
					info.RemoteType = RemoteGPU
				case nvml.NVLINK_DEVICE_TYPE_SWITCH:
					info.RemoteType = RemoteSwitch
				}
			}
			g.NVLinks = append(g.NVLinks, info)
		}
		gpus = append(gpus, g)
	}
	// NVLink peers, asked pairwise: the way to pair links with GPUs when
	// the far ends' bus ids are not the ones the GPUs show (in a virtual
	// machine NVML reports the far end's host-side address).
	for i := range gpus {
		if len(gpus[i].NVLinks) == 0 {
			continue
		}
		gpus[i].NVLinkPeers = []int{}
		for j := range gpus {
			if j == i {
				continue
			}
			if ok, ret := lib.nvlinkP2P(i, j); ret == nvml.SUCCESS && ok {
				gpus[i].NVLinkPeers = append(gpus[i].NVLinkPeers, j)
			}
		}
	}
	return gpus, nil
}

// busID reads NVML's NUL-terminated bus id string.
func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// nvmlErr names an NVML status without calling into a library that may not
// be loaded (nvml.ErrorString needs libnvidia-ml).
func nvmlErr(r nvml.Return) string {
	switch r {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "libnvidia-ml.so.1 not found"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "NVIDIA driver not loaded"
	case nvml.ERROR_NO_PERMISSION:
		return "no permission to talk to the driver"
	case nvml.ERROR_NOT_SUPPORTED:
		return "not supported"
	}
	return fmt.Sprintf("NVML error %d", int32(r))
}
