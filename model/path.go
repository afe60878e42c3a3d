package model

import (
	"math"
	"strconv"
	"strings"
)

// Path is the Hockney description of one way to move bytes from a source
// GPU to a destination GPU of the same node (Multi-path model, section 3.1).
//
// A direct path is one transfer: Alpha1US and Beta1GBps. A staged path is two
// transfers through a staging buffer (another GPU's memory, or host memory):
// the first hop (source to staging buffer) has Alpha1US and Beta1GBps, the
// second (staging buffer to destination) Alpha2US and Beta2GBps, and every
// chunk that crosses the staging buffer pays EpsilonUS for the
// synchronization that makes the second hop wait for the first (an event
// record and wait, or a host-side flag).
//
// Bandwidths are GB/s (1e9 bytes per second); times are microseconds.
type Path struct {
	Name      string  // "direct", "gpu:2" (staged through GPU 2), "host"
	Alpha1US  float64 // startup of the first hop
	Beta1GBps float64 // bandwidth of the first hop
	Alpha2US  float64 // startup of the second hop; 0 for direct
	Beta2GBps float64 // bandwidth of the second hop; 0 for direct
	EpsilonUS float64 // per-chunk staging synchronization; 0 for direct
	Staged    bool
	// Contention is how this staged path and the direct path of the same
	// pair slow each other down while both carry bytes (contention.go).
	// The zero value is the Multi-path model's assumption: no effect. It is
	// ignored on a direct path.
	Contention Contention
}

// Path names and family prefixes.
const (
	DirectName = "direct"
	HostName   = "host"
	gpuPrefix  = "gpu:"
)

// GPUStagedName names the path staged through GPU k: "gpu:k".
func GPUStagedName(k int) string { return gpuPrefix + strconv.Itoa(k) }

// Family returns the path family of p: PathDirect, PathGPU or PathHost
// (0 for a name that is none of them).
func (p Path) Family() PathSet {
	switch {
	case p.Name == DirectName:
		return PathDirect
	case p.Name == HostName:
		return PathHost
	case strings.HasPrefix(p.Name, gpuPrefix):
		return PathGPU
	}
	return 0
}

// bytesPerUS converts GB/s into bytes per microsecond (1 GB/s = 1e3 B/us).
func bytesPerUS(gbps float64) float64 { return gbps * 1e3 }

// usPerByte is the inverse bandwidth in microseconds per byte.
func usPerByte(gbps float64) float64 { return 1 / bytesPerUS(gbps) }

// DirectTimeUS is Hockney's time for one transfer of bytes over the first
// hop of p: alpha + n/beta (Multi-path model, eq. 1 and 6).
func DirectTimeUS(p Path, bytes float64) float64 {
	if bytes <= 0 {
		return 0
	}
	return p.Alpha1US + bytes*usPerByte(p.Beta1GBps)
}

// StagedTimeUS is the time of a staged transfer without pipelining: the whole
// share crosses the first hop, the staging device synchronizes once, then the
// whole share crosses the second hop (Multi-path model, eq. 2).
func StagedTimeUS(p Path, bytes float64) float64 {
	if bytes <= 0 {
		return 0
	}
	return p.Alpha1US + bytes*usPerByte(p.Beta1GBps) +
		p.EpsilonUS + p.Alpha2US + bytes*usPerByte(p.Beta2GBps)
}

// stageTimesUS returns how long one chunk of c bytes occupies each stage of
// a staged path: the first hop (alpha1 + c/beta1), and the synchronization
// plus second hop (epsilon + alpha2 + c/beta2), as in Multi-path model eq. 12.
func stageTimesUS(p Path, c float64) (s1, s2 float64) {
	s1 = p.Alpha1US + c*usPerByte(p.Beta1GBps)
	s2 = p.EpsilonUS + p.Alpha2US + c*usPerByte(p.Beta2GBps)
	return s1, s2
}

// PipelinedTimeUS is the time of a staged transfer of bytes cut into k equal
// chunks, with chunk j+1 crossing the first hop while chunk j crosses the
// second. A two-stage pipeline finishes after the first chunk has filled it
// (s1 + s2) and the other k-1 chunks have passed its slower stage:
//
//	T = s1 + s2 + (k-1)*max(s1, s2)
//
// When the first stage is the slower one this is k*s1 + s2, Multi-path model eq. 13
// case 1; when the second is, s1 + k*s2, eq. 13 case 2. The paper picks the
// case by comparing beta1 and beta2; comparing the stage times themselves
// is the same for large chunks and right for small ones too. k <= 1 gives
// StagedTimeUS.
func PipelinedTimeUS(p Path, bytes float64, k int) float64 {
	if bytes <= 0 {
		return 0
	}
	if k <= 1 {
		return StagedTimeUS(p, bytes)
	}
	s1, s2 := stageTimesUS(p, bytes/float64(k))
	return s1 + s2 + float64(k-1)*math.Max(s1, s2)
}

// TimeUS is the time of bytes on p in k chunks: DirectTimeUS for a direct
// path (k is ignored), PipelinedTimeUS for a staged one.
func (p Path) TimeUS(bytes float64, k int) float64 {
	if !p.Staged {
		return DirectTimeUS(p, bytes)
	}
	return PipelinedTimeUS(p, bytes, k)
}

// BottleneckGBps is the rate p sustains on a long message: beta1 for a
// direct path, the slower hop for a pipelined staged path.
func (p Path) BottleneckGBps() float64 {
	if !p.Staged {
		return p.Beta1GBps
	}
	return math.Min(p.Beta1GBps, p.Beta2GBps)
}

// LaunchUS is what starting p costs the thread that starts the paths one
// after another: the startup of its first hop (Multi-path model, section 4 and
// Algorithm 1 line 20: "the latency alpha from previously scheduled paths
// must be accumulated").
func (p Path) LaunchUS() float64 { return p.Alpha1US }

// valid reports whether p's numbers can be used at all.
func (p Path) valid() bool {
	ok := finitePos(p.Beta1GBps) && finiteNonNeg(p.Alpha1US)
	if p.Staged {
		ok = ok && finitePos(p.Beta2GBps) && finiteNonNeg(p.Alpha2US) && finiteNonNeg(p.EpsilonUS) &&
			p.Contention.valid()
	}
	return ok
}

func finitePos(x float64) bool    { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }
func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }
