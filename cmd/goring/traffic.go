package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// trafficFlags are alltoallv's traffic flags, the same for plan, sim and
// bench (docs/contracts.md "CLI"): --bytes N alone sends N bytes to every peer;
// --hot R:F makes rank R receive fraction F of every rank's traffic;
// --counts FILE reads a JSON byte matrix; --seed S draws random counts,
// zeros included.
type trafficFlags struct {
	hot     string
	counts  string
	seed    uint64
	seedSet bool // --seed given (0 is a seed too); set by observe
}

func (t *trafficFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&t.hot, "hot", "", "alltoallv: R:F, rank R receives fraction F of every rank's traffic")
	fl.StringVar(&t.counts, "counts", "", "alltoallv: JSON byte matrix file")
	fl.Uint64Var(&t.seed, "seed", 0, "alltoallv: random counts (zeros included) from this seed")
}

// observe records what only the command knows: whether --seed was given.
func (t *trafficFlags) observe(cmd *cobra.Command) { t.seedSet = cmd.Flags().Changed("seed") }

// matrix checks the flags for collective c on np ranks and returns the
// function that gives the byte matrix of a size, every entry rounded down
// to whole elems-byte elements; nil for collectives other than alltoallv.
// With --counts the file fixes the matrix and the size only labels it.
func (t *trafficFlags) matrix(c coll.Collective, np int, elem int64) (func(int64) ([][]int64, error), error) {
	set := 0
	for _, v := range []bool{t.hot != "", t.counts != "", t.seedSet} {
		if v {
			set++
		}
	}
	if c != coll.Alltoallv {
		if set > 0 {
			return nil, errors.New("--hot, --counts and --seed apply to alltoallv only")
		}
		return nil, nil
	}
	if set > 1 {
		return nil, errors.New("--hot, --counts and --seed exclude each other")
	}
	var gen func(int64) ([][]int64, error)
	switch {
	case t.hot != "":
		rs, fs, ok := strings.Cut(t.hot, ":")
		r, err1 := strconv.Atoi(rs)
		fr, err2 := strconv.ParseFloat(fs, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("--hot %q: want RANK:FRACTION, e.g. 0:0.5", t.hot)
		}
		if _, err := bench.HotCounts(np, 1, r, fr); err != nil {
			return nil, err
		}
		gen = func(b int64) ([][]int64, error) { return bench.HotCounts(np, b, r, fr) }
	case t.counts != "":
		data, err := os.ReadFile(t.counts)
		if err != nil {
			return nil, fmt.Errorf("--counts: %w", err)
		}
		m, err := bench.ParseCounts(data, np)
		if err != nil {
			return nil, fmt.Errorf("--counts %s: %w", t.counts, err)
		}
		gen = func(int64) ([][]int64, error) { return m, nil }
	case t.seedSet:
		seed := t.seed
		gen = func(b int64) ([][]int64, error) {
			if b > sched.MaxBufferBytes/2 { // entries reach 2b, which must not wrap
				return nil, fmt.Errorf("--seed at %d bytes: random counts of up to twice that pass %d bytes", b, int64(sched.MaxBufferBytes))
			}
			return bench.RandomCounts(np, b, seed), nil
		}
	default:
		gen = func(b int64) ([][]int64, error) { return bench.UniformCounts(np, b), nil }
	}
	return bench.WholeElements(gen, elem), nil
}
