package main

import (
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
)

// moeBenchConfig is benchConfig for dispatch and combine (or the error
// that a MoE flag was given to another collective): the points are
// --tokens counts, each rank draws the same routing from --seed.
func moeBenchConfig(f *benchFlags, c coll.Collective, np int, flagErr error) (bench.Config, error) {
	if flagErr != nil {
		return bench.Config{}, flagErr
	}
	runsErr := f.checkRuns()
	switch {
	case f.moe.bytesSet:
		return bench.Config{}, fmt.Errorf("%s takes --hidden-bytes (one token row) and --tokens, not --bytes", c)
	case f.lanes != "" && f.lanes != "1":
		return bench.Config{}, fmt.Errorf("%s runs on one lane", c)
	case f.json && f.csv:
		return bench.Config{}, errors.New("--json and --csv exclude each other")
	case runsErr != nil:
		return bench.Config{}, runsErr
	case np < 1:
		return bench.Config{}, errors.New("--np is required (number of processes, at least 1)")
	}
	counts, err := f.moe.tokenCounts(true)
	if err != nil {
		return bench.Config{}, err
	}
	dtype, op := coll.DtypeInvalid, coll.OpInvalid
	elem := 1
	if c == coll.Combine {
		if dtype, err = coll.ParseDtype(f.dtype); err != nil {
			return bench.Config{}, fmt.Errorf("--dtype: %w", err)
		}
		if !coll.CombineSums(dtype) {
			return bench.Config{}, fmt.Errorf("combine sums bfloat16 or float32 rows, not %v (--dtype)", dtype)
		}
		op, elem = coll.Sum, dtype.Size()
	}
	tp, err := f.benchTopology(np)
	if err != nil {
		return bench.Config{}, err
	}
	// Check the routing's flags once, before any rank starts.
	if _, err := f.moe.routing(&f.traffic, np, 1, elem); err != nil {
		return bench.Config{}, err
	}
	sizes := make([]int64, len(counts))
	for i, t := range counts {
		sizes[i] = int64(t)
	}
	routing := func(tokens int) (*moe.Routing, error) { return f.moe.routing(&f.traffic, np, tokens, elem) }
	return bench.Config{Topo: tp, Collective: c, Sizes: sizes, Dtype: dtype, Op: op, Iters: f.iters, Warmup: f.warmup,
		Validate: f.validate, Chunks: f.chunks, CallTimeout: f.timeout, Routing: routing, InitPerCall: f.initPerCall}, nil
}
