package model

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/topo"
)

// hockney is a closed-form predictor: alpha + bytes/beta per algorithm,
// with "big_only" unusable under 1 KiB.
func hockney(calls *atomic.Int64) CostPredictor {
	return func(alg string, bytes int64) (float64, error) {
		calls.Add(1)
		switch alg {
		case "low_latency": // alpha 1 us, 1 GB/s
			return 1 + float64(bytes)/1e3, nil
		case "high_bandwidth": // alpha 100 us, 100 GB/s
			return 100 + float64(bytes)/1e5, nil
		case "big_only":
			if bytes < 1024 {
				return 0, errors.New("needs 1 KiB")
			}
			return 1e9, nil
		}
		return 0, fmt.Errorf("unknown %s", alg)
	}
}

func TestCostTableBest(t *testing.T) {
	var calls atomic.Int64
	tb := NewCostTable("allgather", "k", []string{"big_only", "low_latency", "high_bandwidth"}, hockney(&calls))
	// Crossover: 1 + x/1e3 = 100 + x/1e5 at x = 99/(1e-3 - 1e-5) = 100000.
	cases := []struct {
		bytes int64
		want  string
	}{
		/*0*/ {1, "low_latency"},
		/*1*/ {512, "low_latency"},
		/*2*/ {1 << 16, "low_latency"},
		/*3*/ {1 << 17, "high_bandwidth"},
		/*4*/ {1 << 30, "high_bandwidth"},
	}
	for i, c := range cases {
		alg, us, err := tb.Best(c.bytes)
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, c.want, alg, "case %d", i)
		exact, _ := hockney(&atomic.Int64{})(alg, c.bytes)
		assert.InDelta(t, exact, us, 1e-9*exact, "case %d: powers of two are table points", i)
	}
	before := calls.Load()
	_, _, err := tb.Best(1 << 30)
	require.NoError(t, err)
	assert.Equal(t, before, calls.Load(), "a repeated size is served from the table")
}

func TestCostTableInterpolates(t *testing.T) {
	var calls atomic.Int64
	tb := NewCostTable("allgather", "k", []string{"high_bandwidth"}, hockney(&calls))
	for i, n := range []int64{3 << 20, 5 << 20, 100_000_000} {
		got, err := tb.EstimateUS("high_bandwidth", n)
		require.NoError(t, err)
		exact := 100 + float64(n)/1e5
		// log-log interpolation of a line is within a few % between doublings
		assert.InEpsilon(t, exact, got, 0.05, "case %d", i)
		c := costClass(n)
		lo, _ := tb.ClassCostUS("high_bandwidth", c)
		hi, _ := tb.ClassCostUS("high_bandwidth", c+1)
		assert.True(t, got >= lo && got <= hi, "case %d: between its classes", i)
	}
}

func TestCostTableErrors(t *testing.T) {
	var calls atomic.Int64
	tb := NewCostTable("allgather", "k", []string{"big_only", "nope"}, hockney(&calls))
	_, _, err := tb.Best(8)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "big_only: needs 1 KiB")
	assert.Contains(t, err.Error(), "nope: unknown nope")
	_, err = tb.EstimateUS("big_only", 0)
	assert.Error(t, err)
	n := calls.Load()
	_, _, _ = tb.Best(8)
	assert.Equal(t, n, calls.Load(), "errors are cached too")
	s := tb.Scores(1 << 20)
	assert.Equal(t, map[string]int64{"big_only": int64(math.Round(1e6 / 1e9))}, s)
}

func TestCachedCostTableKeyedByShape(t *testing.T) {
	b, err := topo.Preset("clusterB")
	require.NoError(t, err)
	b8, err := b.Repeat(8)
	require.NoError(t, err)
	b16, err := b.Repeat(16)
	require.NoError(t, err)
	k8, k16 := CostTableKey(b8), CostTableKey(b16)
	assert.NotEqual(t, k8, k16)
	var calls atomic.Int64
	t1 := CachedCostTable("allgather", k8, []string{"low_latency"}, hockney(&calls))
	t2 := CachedCostTable("allgather", k8, nil, nil)
	t3 := CachedCostTable("allgather", k16, []string{"low_latency"}, hockney(&calls))
	assert.Same(t, t1, t2)
	assert.NotSame(t, t1, t3)
	assert.Equal(t, "clusterB/8x4/rails4", k8)
}
