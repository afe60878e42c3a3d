package model

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/goring-hpc/goring/topo"
)

// Splitter answers "how should n bytes from GPU src to GPU dst be split" for
// one node topology. Like NCCL's tuning model it is built once (per node
// topology, here) and then asked many times: the path list of every GPU pair
// is enumerated up front, and solved configurations are cached.
//
// A Splitter is safe for concurrent use.
type Splitter struct {
	o     Options
	gpus  int
	node  string
	mu    sync.RWMutex
	pairs []*pairPaths // src*gpus+dst
	cache map[cacheKey]*cachedConfig
}

// pairPaths is what a Splitter knows about one GPU pair. It is replaced
// whole, never modified, except for the lazily computed thresholds.
type pairPaths struct {
	all    []Path
	direct *Path                // the pair's direct path, if it has one
	bySet  [AllPaths + 1][]Path // candidates of each family set, launch order
	thr    [AllPaths + 1]atomic.Int64
}

func newPairPaths(all []Path) *pairPaths {
	pp := &pairPaths{all: all}
	for i := range all {
		if all[i].Family() == PathDirect {
			pp.direct = &pp.all[i]
		}
	}
	for set := PathSet(1); set <= AllPaths; set++ {
		for _, p := range all {
			if p.Family()&set != 0 {
				pp.bySet[set] = append(pp.bySet[set], p)
			}
		}
		pp.thr[set].Store(-1) // not computed yet
	}
	return pp
}

// cacheKey is Algorithm 1's cache key (lines 4-6 and 32): the GPU pair, the
// path families allowed, and the size class of the message (the power of
// two at or below it).
type cacheKey struct {
	src, dst int32
	set      PathSet
	class    uint8
}

// cachedConfig is a solved configuration: the message it was solved for,
// and a share and a chunk count per candidate path (zero for dropped paths).
type cachedConfig struct {
	pair   *pairPaths // the path list it was solved for
	bytes  int64
	theta  []float64
	chunks []int
}

// SizeClass is the cache's size bucket of a message: floor(log2(bytes)).
func SizeClass(bytes int64) uint8 { return uint8(bits.Len64(uint64(bytes)) - 1) }

// NewSplitter enumerates the paths of every GPU pair of node (see
// EnumeratePaths) under options o.
func NewSplitter(node *topo.Node, o Options) (*Splitter, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if node == nil || len(node.GPUs) == 0 {
		return nil, fmt.Errorf("model: node has no GPUs")
	}
	g := len(node.GPUs)
	s := &Splitter{
		o: o, gpus: g, node: node.Name,
		pairs: make([]*pairPaths, g*g),
		cache: map[cacheKey]*cachedConfig{},
	}
	for src := 0; src < g; src++ {
		for dst := 0; dst < g; dst++ {
			if src == dst {
				continue
			}
			ps, err := EnumeratePaths(node, src, dst, o)
			if err != nil {
				return nil, err
			}
			s.pairs[src*g+dst] = newPairPaths(ps)
		}
	}
	return s, nil
}

// GPUs is the number of GPUs of the node.
func (s *Splitter) GPUs() int { return s.gpus }

// Options returns the options the splitter was built with.
func (s *Splitter) Options() Options { return s.o }

func (s *Splitter) checkPair(src, dst int) error {
	for _, v := range [2]int{src, dst} {
		if v < 0 || v >= s.gpus {
			return fmt.Errorf("GPU %d out of range: node %q has GPUs 0..%d", v, s.node, s.gpus-1)
		}
	}
	if src == dst {
		return fmt.Errorf("source and destination are the same GPU %d", src)
	}
	return nil
}

func (s *Splitter) pair(src, dst int) *pairPaths {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pairs[src*s.gpus+dst]
}

// Paths returns a copy of the candidate paths from src to dst.
func (s *Splitter) Paths(src, dst int) ([]Path, error) {
	if err := s.checkPair(src, dst); err != nil {
		return nil, err
	}
	return append([]Path(nil), s.pair(src, dst).all...), nil
}

// SetPaths replaces the candidate paths of a pair, for example with
// calibrated parameters, and forgets what was cached for that pair.
func (s *Splitter) SetPaths(src, dst int, paths []Path) error {
	if err := s.checkPair(src, dst); err != nil {
		return err
	}
	for _, p := range paths {
		if !p.valid() || p.Family() == 0 {
			return fmt.Errorf("path %q: want a name direct, gpu:N or host, finite non-negative startups and positive bandwidths", p.Name)
		}
	}
	pp := newPairPaths(append([]Path(nil), paths...))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pairs[src*s.gpus+dst] = pp
	for k := range s.cache {
		if int(k.src) == src && int(k.dst) == dst {
			delete(s.cache, k)
		}
	}
	return nil
}

// Split divides bytes from GPU src to GPU dst over the paths of the
// families in set (Algorithm 1 of Multi-path model):
//
//   - below the size threshold (Threshold) only the direct path is used;
//   - a configuration cached for the same pair, path set and size class is
//     reused: the same paths and chunk counts, shares recomputed for bytes
//     (see rescale), the remainder to the direct path;
//   - otherwise the closed form solves it (exact: the reference solver,
//     never cached) and the result is cached.
//
// The answer never predicts a time above the direct path's alone when the
// set includes it.
func (s *Splitter) Split(src, dst int, bytes int64, set PathSet, exact bool) (Split, error) {
	if err := s.checkPair(src, dst); err != nil {
		return Split{}, err
	}
	if bytes <= 0 {
		return Split{}, fmt.Errorf("message size %d bytes: want at least 1 byte", bytes)
	}
	if set&AllPaths == 0 || set&^AllPaths != 0 {
		return Split{}, fmt.Errorf("path set %#x: want a non-empty combination of direct, gpu, host", uint8(set))
	}
	key := cacheKey{src: int32(src), dst: int32(dst), set: set, class: SizeClass(bytes)}
	s.mu.RLock()
	pp := s.pairs[src*s.gpus+dst]
	cfg := s.cache[key]
	s.mu.RUnlock()
	paths := pp.bySet[set]
	if len(paths) == 0 {
		return Split{}, fmt.Errorf("no %s path from gpu:%d to gpu:%d on node %q", set, src, dst, s.node)
	}
	directUS := 0.0
	if pp.direct != nil {
		directUS = pp.direct.TimeUS(float64(bytes), 1)
	}
	if d := directIndex(paths); d >= 0 && bytes < s.threshold(pp, set) {
		sp := directOnly(paths, d, bytes)
		sp.Exact = exact
		return sp, nil
	}
	if exact {
		sp, err := Solve(paths, bytes, s.o, true)
		sp.DirectOnlyUS = directUS
		return sp, err
	}
	if cfg != nil && cfg.pair == pp && !s.o.DisableCache {
		sp := s.rescale(paths, cfg, bytes)
		sp.DirectOnlyUS = directUS
		return sp, nil
	}
	sp, err := Solve(paths, bytes, s.o, false)
	if err != nil {
		return Split{}, err
	}
	sp.DirectOnlyUS = directUS
	if !s.o.DisableCache {
		cfg := &cachedConfig{pair: pp, bytes: bytes, theta: make([]float64, len(paths)), chunks: make([]int, len(paths))}
		for i, sh := range sp.Paths {
			cfg.theta[i] = sh.Theta
			cfg.chunks[i] = sh.Chunks
		}
		s.mu.Lock()
		s.cache[key] = cfg
		s.mu.Unlock()
	}
	return sp, nil
}

// rescale applies a cached configuration to a message of n bytes. The
// configuration fixes which paths are used and their chunk counts (scaled by
// sqrt(n/n0), as eq. 14 and 15 scale them); with both fixed, every path's
// time is an exact line, and eq. 24 gives the shares for n directly: O(p),
// no search. The remainder goes to the direct path. If a share comes out
// non-positive (the size moved across a path's break-even point) the
// message is solved afresh; a result slower than the direct path alone
// falls back to it.
func (s *Splitter) rescale(paths []Path, cfg *cachedConfig, n int64) Split {
	p := len(paths)
	var xBuf, offBuf, thBuf [16]float64
	var kBuf [16]int
	var usedBuf [16]bool
	var lineBuf [16]Line
	x, off, th, k, used, lines := xBuf[:0], offBuf[:0], thBuf[:0], kBuf[:0], usedBuf[:0], lineBuf[:0]
	if p > len(xBuf) {
		x, off, th = make([]float64, 0, p), make([]float64, 0, p), make([]float64, 0, p)
		k, used, lines = make([]int, 0, p), make([]bool, 0, p), make([]Line, 0, p)
	}
	x, off, k, used = x[:p], off[:p], k[:p], used[:p]
	nf := float64(n)
	scale := math.Sqrt(nf / float64(cfg.bytes))
	lim := s.o.limits()
	for i := range paths {
		used[i] = cfg.theta[i] > 0
		x[i] = cfg.theta[i] * nf
		k[i] = cfg.chunks[i]
		if used[i] && k[i] > 1 {
			k[i] = roundChunks(float64(k[i])*scale, x[i], lim)
		}
	}
	launchOffsetsUS(paths, used, off)
	eff := contendedPaths(paths, used, nil)
	for i := range paths {
		if !used[i] {
			continue
		}
		l := DirectLine(eff[i])
		if paths[i].Staged {
			l = FixedChunksLine(eff[i], k[i], x[i])
		}
		l.DeltaUS += off[i]
		lines = append(lines, l)
	}
	th = ThetaLines(lines, nf, th[:len(lines)])
	j := 0
	for i := range paths {
		if !used[i] {
			continue
		}
		if th[j] <= 0 {
			sp, _ := Solve(paths, n, s.o, false)
			return sp
		}
		x[i] = th[j] * nf
		j++
	}
	sp := assemble(paths, n, x, k, s.o)
	sp.Cached = true
	if d := directIndex(paths); d >= 0 && sp.PredictedUS >= paths[d].TimeUS(nf, 1) {
		alone := directOnly(paths, d, n)
		alone.Cached = true
		return alone
	}
	return sp
}

// Threshold is the message size below which Split uses only the direct
// path. Options.ThresholdBytes sets it; when that is 0 the model derives it
// per pair and path set: the smallest size at which the closed-form split
// gains more over the direct path alone than the startups of the extra
// paths it launches. The model's gain already counts those startups once;
// asking for the gain to exceed them again keeps the split away from sizes
// where a small error in alpha would make it lose. It is 0 when the set has
// no direct path, and math.MaxInt64 when splitting never pays.
func (s *Splitter) Threshold(src, dst int, set PathSet) (int64, error) {
	if err := s.checkPair(src, dst); err != nil {
		return 0, err
	}
	if set&AllPaths == 0 || set&^AllPaths != 0 {
		return 0, fmt.Errorf("path set %#x: want a non-empty combination of direct, gpu, host", uint8(set))
	}
	return s.threshold(s.pair(src, dst), set), nil
}

func (s *Splitter) threshold(pp *pairPaths, set PathSet) int64 {
	switch {
	case s.o.ThresholdBytes > 0:
		return s.o.ThresholdBytes
	case s.o.ThresholdBytes < 0:
		return 0
	}
	if t := pp.thr[set].Load(); t >= 0 {
		return t
	}
	t := modelThreshold(pp.bySet[set], s.o)
	pp.thr[set].Store(t)
	return t
}

// splitPays reports whether splitting n bytes over paths gains more than
// the launch cost of the extra paths it uses.
func splitPays(paths []Path, d int, n int64, o Options) bool {
	sp := solveClosed(paths, n, o)
	alone := paths[d].TimeUS(float64(n), 1)
	extra := 0.0
	for i, sh := range sp.Paths {
		if i != d && sh.Bytes > 0 {
			extra += paths[i].LaunchUS()
		}
	}
	return sp.Used() > 1 && alone-sp.PredictedUS > extra
}

// modelThreshold finds the smallest n for which splitPays holds: doubling
// from 1 KiB to find a bracket, then bisection on bytes.
func modelThreshold(paths []Path, o Options) int64 {
	d := directIndex(paths)
	if d < 0 {
		return 0
	}
	if len(paths) == 1 {
		return math.MaxInt64
	}
	hi := int64(1 << 10)
	for ; hi <= 1<<50 && !splitPays(paths, d, hi, o); hi *= 2 {
	}
	if hi > 1<<50 {
		return math.MaxInt64
	}
	lo := hi / 2 // splitPays(lo) is false (or lo is below the first probe)
	for hi-lo > 1 && hi-lo > hi>>12 {
		mid := lo + (hi-lo)/2
		if splitPays(paths, d, mid, o) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
