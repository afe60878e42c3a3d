package model

import (
	"fmt"
	"strings"
)

// PathSet selects path families: a bit per family.
type PathSet uint8

// Path families.
const (
	PathDirect PathSet = 1 << iota // the route between the two GPUs
	PathGPU                        // staged through another GPU ("gpu:k")
	PathHost                       // staged through host memory ("host")

	AllPaths = PathDirect | PathGPU | PathHost
)

var familyNames = [...]struct {
	name string
	set  PathSet
}{{"direct", PathDirect}, {"gpu", PathGPU}, {"host", PathHost}}

// ParsePathSet reads a comma-separated list of families: direct, gpu, host
// (or all). Empty names and unknown ones are errors.
func ParsePathSet(s string) (PathSet, error) {
	var set PathSet
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "all" {
			set |= AllPaths
			continue
		}
		found := false
		for _, fn := range familyNames {
			if f == fn.name {
				set |= fn.set
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown path family %q in %q (want direct, gpu, host or all, comma-separated)", f, s)
		}
	}
	return set, nil
}

// String lists the families in s, comma-separated.
func (s PathSet) String() string {
	var parts []string
	for _, fn := range familyNames {
		if s&fn.set != 0 {
			parts = append(parts, fn.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// Options tune the model. Start from DefaultOptions and change what you need.
type Options struct {
	// GPUStageEpsilonUS and HostStageEpsilonUS are the per-chunk
	// synchronization cost at a staging GPU and at host memory (epsilon of
	// Multi-path model eq. 2). The topology carries no such figure; these defaults
	// stand until `goring calibrate` measures them.
	GPUStageEpsilonUS  float64
	HostStageEpsilonUS float64
	// NoPipeline sends each staged share in one piece (eq. 11) instead of
	// in chunks (eq. 13-24).
	NoPipeline bool
	// MaxChunks and MinChunkBytes bound the chunking of one staged path.
	MaxChunks     int
	MinChunkBytes int64
	// ThresholdBytes: messages smaller than this use the direct path only.
	// 0 derives it from the model (see Splitter.Threshold); a negative value
	// disables the threshold.
	ThresholdBytes int64
	// DisableCache makes every Split solve afresh.
	DisableCache bool
}

// DefaultOptions returns the options the CLI uses.
func DefaultOptions() Options {
	return Options{
		GPUStageEpsilonUS:  3,
		HostStageEpsilonUS: 10,
		MaxChunks:          1024,
		MinChunkBytes:      4096,
	}
}

func (o Options) validate() error {
	if !finiteNonNeg(o.GPUStageEpsilonUS) || !finiteNonNeg(o.HostStageEpsilonUS) {
		return fmt.Errorf("model options: staging epsilons must be finite and non-negative (got %g, %g)", o.GPUStageEpsilonUS, o.HostStageEpsilonUS)
	}
	if o.MaxChunks < 1 {
		return fmt.Errorf("model options: MaxChunks %d must be at least 1 (start from DefaultOptions)", o.MaxChunks)
	}
	if o.MinChunkBytes < 1 {
		return fmt.Errorf("model options: MinChunkBytes %d must be at least 1 (start from DefaultOptions)", o.MinChunkBytes)
	}
	return nil
}

func (o Options) limits() chunkLimits {
	return chunkLimits{maxChunks: o.MaxChunks, minChunkBytes: float64(o.MinChunkBytes)}
}
