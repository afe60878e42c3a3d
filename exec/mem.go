package exec

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

// MemKind says where a buffer lives.
type MemKind uint8

const (
	// MemHost is host memory: the executor reads and writes it itself.
	MemHost MemKind = iota
	// MemCUDA is device memory of the CUDA GPU Mem.Device. The host never
	// dereferences it; copies and reductions go to a LocalExecutor for it
	// (package cudaexec) and transfers to a transport that knows it.
	MemCUDA
	// MemFake is device-like memory of the tests (package exec/fakedev):
	// addresses that are not host pointers, so any code that takes a
	// host-only shortcut with device memory fails a test.
	MemFake
)

// Mem is a memory type: a kind and, for device memory, the device.
type Mem struct {
	Kind   MemKind
	Device int
}

// Host is host memory.
var Host = Mem{}

// CUDA is the memory of CUDA GPU device.
func CUDA(device int) Mem { return Mem{Kind: MemCUDA, Device: device} }

// IsHost reports whether m is host memory.
func (m Mem) IsHost() bool { return m.Kind == MemHost }

// String is "host", "cuda:N" or "fake:N".
func (m Mem) String() string {
	switch m.Kind {
	case MemHost:
		return "host"
	case MemCUDA:
		return "cuda:" + strconv.Itoa(m.Device)
	case MemFake:
		return "fake:" + strconv.Itoa(m.Device)
	}
	return fmt.Sprintf("mem(%d):%d", m.Kind, m.Device)
}

// ParseMem reads "host", "cuda" (device 0), "cuda:N" or "fake:N".
func ParseMem(s string) (Mem, error) {
	kind, dev, hasDev := strings.Cut(s, ":")
	var m Mem
	switch kind {
	case "host":
		if hasDev {
			return m, fmt.Errorf("memory %q: host memory has no device", s)
		}
		return Host, nil
	case "cuda":
		m.Kind = MemCUDA
	case "fake":
		m.Kind = MemFake
	default:
		return m, fmt.Errorf("memory %q: want host, cuda or cuda:N", s)
	}
	if hasDev {
		d, err := strconv.Atoi(dev)
		if err != nil || d < 0 {
			return m, fmt.Errorf("memory %q: device must be a number >= 0", s)
		}
		m.Device = d
	}
	return m, nil
}

// Region is a byte range of one memory type. Host memory is held as a Go
// slice (so the memory it points into stays alive); device memory as an
// address that only the device's own code dereferences. The zero Region
// is absent host memory.
type Region struct {
	mem  Mem
	host []byte
	addr uintptr
	n    int64
}

// HostRegion is the host memory of b.
func HostRegion(b []byte) Region { return Region{host: b, n: int64(len(b))} }

// DeviceRegion is n bytes of device memory mem at addr. The caller keeps
// the memory allocated while any Machine or transport uses the Region.
func DeviceRegion(mem Mem, addr uintptr, n int64) Region {
	if mem.IsHost() {
		panic("exec: DeviceRegion of host memory; use HostRegion")
	}
	return Region{mem: mem, addr: addr, n: n}
}

// Mem is the region's memory type.
func (r Region) Mem() Mem { return r.mem }

// Len is the region's length in bytes.
func (r Region) Len() int64 { return r.n }

// IsHost reports whether the region is host memory.
func (r Region) IsHost() bool { return r.mem.IsHost() }

// Absent reports whether the region names no memory at all (the zero
// Region, or a nil host slice).
func (r Region) Absent() bool { return r.mem.IsHost() && r.host == nil }

// Bytes is the host memory of the region. It panics for device memory:
// host code must never read device memory through a guess.
func (r Region) Bytes() []byte {
	if !r.mem.IsHost() {
		panic("exec: Bytes of " + r.mem.String() + " memory")
	}
	return r.host
}

// Addr is the region's address: the device address, or the address of the
// first host byte (0 for an empty host region).
func (r Region) Addr() uintptr {
	if r.mem.IsHost() {
		if len(r.host) == 0 {
			return 0
		}
		return uintptr(unsafe.Pointer(unsafe.SliceData(r.host)))
	}
	return r.addr
}

// Slice is the n bytes at off; the caller has checked the range.
func (r Region) Slice(off, n int64) Region {
	if r.mem.IsHost() {
		return Region{host: r.host[off : off+n : off+n], n: n}
	}
	return Region{mem: r.mem, addr: r.addr + uintptr(off), n: n}
}

// String describes the region for errors: "cuda:0[0x7f...+4096]".
func (r Region) String() string {
	return fmt.Sprintf("%v[%#x+%d]", r.mem, r.Addr(), r.n)
}
