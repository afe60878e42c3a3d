package calib

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/topo"
)

// From a calibration to the model's paths.
//
// The topology says which paths a GPU pair has (model.EnumeratePaths); the
// calibration replaces the figures of those it measured:
//
//   - the direct path gets the fitted startup and bandwidth
//     (model.MeasuredDirectPath);
//   - a staged path gets the hop bandwidth that reproduces the measured
//     pipeline rate with the options' epsilon at the measured chunk size
//     (model.MeasuredStagedPath); without a chunk size (files written before
//     chunk_bytes) the hops get the measured rate and epsilon on top;
//   - a staged path with a contention entry for the pair gets its fitted
//     Contention.
//
// Pairs the file did not measure keep the topology's figures.
// NewSplitter is the entry point for a library:
//
//	cal, err := calib.Load(f)
//	sp, err := calib.NewSplitter(node, cal, model.DefaultOptions())
//	s, err := sp.Split(src, dst, bytes, model.AllPaths, false)
//	// s.Paths[i].Bytes and .Chunks per path, in launch order

// gpuName is how calibrate names a GPU in "from" and "to".
func gpuName(i int) string { return "GPU " + strconv.Itoa(i) }

// parseGPU reads "GPU N"; ok is false for anything else (the host-memory
// path between two processes names processes).
func parseGPU(s string) (int, bool) {
	rest, found := strings.CutPrefix(s, "GPU ")
	if !found {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}

// gpuPath finds the fit of path name from GPU src to GPU dst.
func (c *Calibration) gpuPath(name string, src, dst int) (CalibratedPath, bool) {
	for _, p := range c.Paths {
		if p.Path == name && p.From == gpuName(src) && p.To == gpuName(dst) {
			return p, true
		}
	}
	return CalibratedPath{}, false
}

// Measured reports whether the file has the direct path from GPU src to
// GPU dst: the pairs whose paths PairPaths takes from the file.
func (c *Calibration) Measured(src, dst int) bool {
	_, ok := c.gpuPath(model.DirectName, src, dst)
	return ok
}

// MeasuredPairs lists the GPU pairs whose direct path the file measured,
// as "GPU a -> GPU b", in file order.
func (c *Calibration) MeasuredPairs() []string {
	var out []string
	for _, p := range c.Paths {
		if _, ok := parseGPU(p.From); ok && p.Path == model.DirectName {
			out = append(out, p.From+" -> "+p.To)
		}
	}
	return out
}

// CheckNode reports whether the file can describe node: the same GPU
// count and model where the file records them, and no measured GPU outside
// the node. Readers call it before using the file's figures, so that a
// calibration of one machine is not applied to another.
func (c *Calibration) CheckNode(node *topo.Node) error {
	g := len(node.GPUs)
	if c.GPUs > 0 && c.GPUs != g {
		return fmt.Errorf("calibration was measured on a node of %d GPUs; node %q has %d", c.GPUs, node.Name, g)
	}
	if c.GPUModel != "" {
		for _, gpu := range node.GPUs {
			if gpu.Model != "" && !sameGPUModel(c.GPUModel, gpu.Model) {
				return fmt.Errorf("calibration was measured on %q GPUs; node %q has %q", c.GPUModel, node.Name, gpu.Model)
			}
		}
	}
	check := func(what, from, to string) error {
		for _, e := range [2]string{from, to} {
			if i, ok := parseGPU(e); ok && i >= g {
				return fmt.Errorf("calibration %s %s -> %s: node %q has %d GPUs (0..%d)", what, from, to, node.Name, g, g-1)
			}
		}
		return nil
	}
	for _, p := range c.Paths {
		if err := check("path "+p.Path, p.From, p.To); err != nil {
			return err
		}
	}
	for _, t := range c.Contention {
		if err := check("contention of "+t.Path, t.From, t.To); err != nil {
			return err
		}
	}
	return nil
}

// sameGPUModel compares a driver's device name ("NVIDIA H200") with a
// topology's model ("H200"): ignoring case, every word of one (runs of
// letters and digits) is a word of the other. Whole words, not substrings:
// "NVIDIA H20" and "NVIDIA A10" are other GPUs than H200 and A100.
func sameGPUModel(a, b string) bool {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
		})
	}
	within := func(x, y []string) bool {
		for _, w := range x {
			if !slices.Contains(y, w) {
				return false
			}
		}
		return true
	}
	wa, wb := words(a), words(b)
	return within(wa, wb) || within(wb, wa)
}

// PairPaths returns the paths from GPU src to GPU dst of node (in launch
// order, as model.EnumeratePaths) with the file's figures where it has them (see
// above). measured is false when the file has no direct path for the pair;
// the paths are then the topology's. Call CheckNode first.
func (c *Calibration) PairPaths(node *topo.Node, src, dst int, o model.Options) (paths []model.Path, measured bool, err error) {
	paths, err = model.EnumeratePaths(node, src, dst, o)
	if err != nil {
		return nil, false, err
	}
	dp, ok := c.gpuPath(model.DirectName, src, dst)
	if !ok {
		return paths, false, nil
	}
	d := slices.IndexFunc(paths, func(p model.Path) bool { return p.Family() == model.PathDirect })
	if d < 0 {
		return nil, false, fmt.Errorf("calibration measured a direct path %s -> %s; node %q has no direct route between them", dp.From, dp.To, node.Name)
	}
	paths[d] = model.MeasuredDirectPath(dp.AlphaUS, dp.BetaGBps)
	for i := range paths {
		if !paths[i].Staged {
			continue
		}
		if sp, ok := c.gpuPath(paths[i].Name, src, dst); ok {
			paths[i] = model.MeasuredStagedPath(sp.Path, sp.BetaGBps, sp.ChunkBytes, paths[i].EpsilonUS)
		}
		for _, t := range c.Contention {
			if t.Path == paths[i].Name && t.From == gpuName(src) && t.To == gpuName(dst) {
				paths[i].Contention = t.Contention()
			}
		}
	}
	return paths, true, nil
}

// NewSplitter is model.NewSplitter with the calibration's figures
// installed for every pair it measured (PairPaths); other pairs keep the
// topology's. It fails when the file is for another kind of node
// (CheckNode).
func NewSplitter(node *topo.Node, cal *Calibration, o model.Options) (*model.Splitter, error) {
	if node == nil {
		return nil, fmt.Errorf("model: no node")
	}
	if err := cal.CheckNode(node); err != nil {
		return nil, err
	}
	sp, err := model.NewSplitter(node, o)
	if err != nil {
		return nil, err
	}
	for src := range node.GPUs {
		for dst := range node.GPUs {
			if src == dst || !cal.Measured(src, dst) {
				continue
			}
			paths, _, err := cal.PairPaths(node, src, dst, o)
			if err != nil {
				return nil, err
			}
			if err := sp.SetPaths(src, dst, paths); err != nil {
				return nil, err
			}
		}
	}
	return sp, nil
}
