package model

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"

	"github.com/goring-hpc/goring/topo"
)

// CostPredictor predicts the time in microseconds of running algorithm alg
// on bytes (UCC's meaning per collective). Package choose (choose.Costs,
// what auto asks where no measured row covers a shape) and goring sim
// give the simulator as one; closed forms can too. An error that wraps
// sched.UnsupportedError, or any other error, marks the algorithm as
// unusable at that size; the table remembers it.
//
// Taking a function keeps model free of sim and sched: sim depends on
// model's neighbours, never the other way round.
type CostPredictor func(alg string, bytes int64) (float64, error)

// CostTable is the predicted cost of every algorithm of one collective on
// one topology, per size class: sizes 2^c for c = 0..62. It is filled
// lazily, an entry per (algorithm, class) the first time a size in it is
// asked for, in the manner of NCCL's tuning table built once per
// communicator. It is safe for concurrent use.
//
// Estimates between two classes interpolate linearly in log(size) and
// log(time): collective times are close to a power law between powers of
// two (alpha-dominated below, beta-dominated above).
type CostTable struct {
	Collective string
	// Key names the topology the table is for (see CostTableKey).
	Key        string
	Algorithms []string

	predict CostPredictor
	mu      sync.Mutex
	entries map[costEntryKey]costEntry
}

type costEntryKey struct {
	alg   string
	class int
}

type costEntry struct {
	us  float64
	err error
}

// NewCostTable makes an empty table; predict is called on demand.
func NewCostTable(collective, key string, algorithms []string, predict CostPredictor) *CostTable {
	return &CostTable{
		Collective: collective, Key: key,
		Algorithms: append([]string(nil), algorithms...),
		predict:    predict, entries: map[costEntryKey]costEntry{},
	}
}

// CostTableKey identifies a topology for caching: its name and its shape
// (nodes x GPUs per node, rails), so clusterB with 8 nodes and clusterB with
// 16 get different tables.
func CostTableKey(t *topo.Topology) string {
	return fmt.Sprintf("%s/%dx%d/rails%d", t.Name, t.NumNodes(), t.GPUsPerNode(), len(t.Rails))
}

var (
	costTablesMu sync.Mutex
	costTables   = map[string]*CostTable{}
)

// CachedCostTable returns the table for (collective, key), making it with
// algorithms and predict the first time. Later calls reuse the table and
// ignore their algorithms and predict.
func CachedCostTable(collective, key string, algorithms []string, predict CostPredictor) *CostTable {
	costTablesMu.Lock()
	defer costTablesMu.Unlock()
	k := collective + "@" + key
	if t, ok := costTables[k]; ok {
		return t
	}
	t := NewCostTable(collective, key, algorithms, predict)
	costTables[k] = t
	return t
}

// costClass is the size class whose representative size 2^c is nearest
// below or equal to bytes (0 for bytes <= 1).
func costClass(bytes int64) int {
	if bytes <= 1 {
		return 0
	}
	return bits.Len64(uint64(bytes)) - 1
}

// ClassCostUS is the predicted time of alg at the representative size 2^c
// of class c.
func (t *CostTable) ClassCostUS(alg string, class int) (float64, error) {
	if class < 0 || class > 62 {
		return 0, fmt.Errorf("cost table: size class %d out of range 0..62", class)
	}
	k := costEntryKey{alg, class}
	t.mu.Lock()
	e, ok := t.entries[k]
	t.mu.Unlock()
	if ok {
		return e.us, e.err
	}
	us, err := t.predict(alg, int64(1)<<class)
	if err == nil && (math.IsNaN(us) || us < 0) {
		err = fmt.Errorf("cost table: %s predicted %g us at %d bytes", alg, us, int64(1)<<class)
	}
	t.mu.Lock()
	t.entries[k] = costEntry{us, err}
	t.mu.Unlock()
	return us, err
}

// EstimateUS predicts alg at bytes from the two classes around it.
func (t *CostTable) EstimateUS(alg string, bytes int64) (float64, error) {
	if bytes < 1 {
		return 0, fmt.Errorf("cost table: %d bytes: want at least 1", bytes)
	}
	c := costClass(bytes)
	lo, err := t.ClassCostUS(alg, c)
	if err != nil {
		return 0, err
	}
	if bytes == int64(1)<<c || c == 62 {
		return lo, nil
	}
	hi, err := t.ClassCostUS(alg, c+1)
	if err != nil || lo <= 0 || hi <= 0 {
		// The next class is unusable (or a time is zero): stay with the
		// class the size is in.
		return lo, nil
	}
	f := math.Log2(float64(bytes)) - float64(c)
	return math.Exp2((1-f)*math.Log2(lo) + f*math.Log2(hi)), nil
}

// Best returns the algorithm with the lowest estimate at bytes, skipping
// those that cannot serve it; ties go to the earlier algorithm in the
// table's list. The error, when none can, lists each one's reason.
func (t *CostTable) Best(bytes int64) (alg string, us float64, err error) {
	var reasons []string
	for _, a := range t.Algorithms {
		v, err := t.EstimateUS(a, bytes)
		if err != nil {
			reasons = append(reasons, a+": "+err.Error())
			continue
		}
		if alg == "" || v < us {
			alg, us = a, v
		}
	}
	if alg == "" {
		if len(reasons) == 0 {
			return "", 0, errors.New("cost table: no algorithms")
		}
		return "", 0, fmt.Errorf("cost table: no %s algorithm serves %d bytes (%s)", t.Collective, bytes, strings.Join(reasons, "; "))
	}
	return alg, us, nil
}

// Scores turns the estimates at bytes into UCC-style scores: the fastest
// algorithm gets the highest score, each a rounded 1e6/us (so a 10 us
// algorithm scores 100000). Unusable algorithms are left out.
func (t *CostTable) Scores(bytes int64) map[string]int64 {
	out := map[string]int64{}
	for _, a := range t.Algorithms {
		v, err := t.EstimateUS(a, bytes)
		if err != nil {
			continue
		}
		out[a] = int64(math.Round(1e6 / math.Max(v, 1e-3)))
	}
	return out
}
