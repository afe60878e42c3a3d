package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/jsondoc"
	"github.com/goring-hpc/goring/sched"
)

// Traffic matrices of alltoallv, as docs/contracts.md's CLI defines them for plan,
// sim and bench alike. counts[i][j] is the bytes rank i sends rank j.

// UniformCounts: every rank sends bytes to every rank (itself included).
func UniformCounts(n int, bytes int64) [][]int64 { return sched.UniformCounts(n, bytes) }

// HotCounts: rank hot receives fraction frac of every rank's n*bytes, and
// the rest is spread evenly over the other ranks (remainders to the lowest
// ranks), so each row keeps the uniform total.
func HotCounts(n int, bytes int64, hot int, frac float64) ([][]int64, error) {
	if hot < 0 || hot >= n {
		return nil, fmt.Errorf("--hot %d:%g: rank out of range [0,%d)", hot, frac, n)
	}
	if !(frac >= 0 && frac <= 1) {
		return nil, fmt.Errorf("--hot %d:%g: fraction must be in [0,1]", hot, frac)
	}
	if bytes > sched.MaxBufferBytes/int64(n) { // a row's total must not wrap
		return nil, fmt.Errorf("--hot %d:%g at %d bytes: %d ranks' rows pass %d bytes", hot, frac, bytes, n, int64(sched.MaxBufferBytes))
	}
	total := int64(n) * bytes
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
		toHot := int64(frac * float64(total))
		if n == 1 {
			toHot = total
		}
		m[i][hot] = toHot
		rest := total - toHot
		others := int64(n - 1)
		k := int64(0)
		for j := 0; j < n; j++ {
			if j == hot {
				continue
			}
			share := rest / others
			if k < rest%others {
				share++
			}
			m[i][j] = share
			k++
		}
	}
	return m, nil
}

// RandomCounts draws every entry uniformly from [0, 2*bytes] with a seeded
// generator, and makes about a quarter of the entries zero.
func RandomCounts(n int, bytes int64, seed uint64) [][]int64 {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
		for j := range m[i] {
			if rng.IntN(4) == 0 {
				continue
			}
			m[i][j] = rng.Int64N(2*bytes + 1)
		}
	}
	return m
}

// MaxCountsFileBytes bounds a --counts file.
const MaxCountsFileBytes = 16 << 20

// ParseCounts reads a JSON byte matrix (an array of n arrays of n
// non-negative integers) for n ranks.
func ParseCounts(data []byte, n int) ([][]int64, error) {
	if len(data) > MaxCountsFileBytes {
		return nil, fmt.Errorf("counts file larger than %d bytes", MaxCountsFileBytes)
	}
	var m [][]int64
	if err := jsondoc.Decode(data, &m, false); err != nil {
		return nil, fmt.Errorf("counts JSON: %w", err)
	}
	if err := coll.CheckMatrix(m, n, 0); err != nil {
		return nil, fmt.Errorf("counts matrix: %w", err)
	}
	for i, row := range m {
		for j, v := range row {
			if v > 1<<40 {
				return nil, fmt.Errorf("counts[%d][%d] = %d is unreasonably large", i, j, v)
			}
		}
	}
	return m, nil
}

// WholeElements is gen with every entry of its matrices rounded down to
// whole elem-byte elements (elem <= 1: gen itself), so that a reducing or
// typed plan moves whole elements whatever the matrix asked for.
func WholeElements(gen func(int64) ([][]int64, error), elem int64) func(int64) ([][]int64, error) {
	if elem <= 1 {
		return gen
	}
	return func(b int64) ([][]int64, error) {
		m, err := gen(b)
		if err != nil {
			return m, err
		}
		out := make([][]int64, len(m))
		for i := range m {
			out[i] = make([]int64, len(m[i]))
			for j, v := range m[i] {
				out[i][j] = v - v%elem
			}
		}
		return out, nil
	}
}
