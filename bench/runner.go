package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Ctrl is the job's control plane, used between sizes (launch.Client and
// launch.Session satisfy it).
type Ctrl interface {
	Allgather(ctx context.Context, data []byte) ([][]byte, error)
}

// Transport is the data plane the runner drives: an exec.Transport that
// can also start a new collective call (a fresh tag sequence).
type Transport interface {
	exec.Transport
	NextCall()
}

// Config is one rank's share of a benchmark.
type Config struct {
	Rank       int
	Topo       *topo.Topology
	Collective coll.Collective
	Algorithms []string
	Sizes      []int64
	Dtype      coll.Dtype
	Op         coll.Op
	// Iters <= 0 and Warmup < 0 choose as OMB does (see Iterations).
	Iters, Warmup int
	Validate      bool
	Root          int
	// Chunks > 1 asks the generators to pipeline long transfers in that
	// many pieces (sched.Spec.Chunks).
	Chunks int
	// Traffic returns the alltoallv byte matrix for a size.
	Traffic func(bytes int64) ([][]int64, error)
	// CallTimeout bounds one collective call (0: exec.TimeoutFor its size).
	CallTimeout time.Duration
	// Alloc and Free provide host buffer memory (ucx.Alloc for real
	// runs); nil uses the Go heap.
	Alloc func(n int) []byte
	Free  func(b []byte) error
	// Memory, when set, provides the buffers instead (GPU memory, say):
	// patterns are written to and read from it through the host.
	Memory Memory
	// Straggler, when StragglerDelay > 0, is a rank that sleeps that long
	// before every iteration: an emulated slow peer, to see how the others
	// wait (and what CPU they burn meanwhile).
	Straggler      int
	StragglerDelay time.Duration
	// OnRow receives each result on rank 0; OnIteration is called on
	// rank 0 after every iteration (progress).
	OnRow       func(Row)
	OnIteration func()
}

// Plan generates this rank's program for one (algorithm, size), with the
// counts of alltoallv. An *sched.UnsupportedError means the algorithm does
// not serve the case; every rank reaches the same verdict.
func (c *Config) Plan(alg string, bytes int64) (*sched.Plan, error) {
	spec := sched.Spec{Collective: c.Collective, Algorithm: alg, Topo: c.Topo, Bytes: bytes, Root: c.Root, DtypeBytes: 1, Chunks: c.Chunks}
	if c.Collective.Reduces() {
		spec.DtypeBytes = c.Dtype.Size()
	}
	if c.Collective == coll.Alltoallv {
		if c.Traffic == nil {
			return nil, fmt.Errorf("alltoallv needs a traffic matrix")
		}
		counts, err := c.Traffic(bytes)
		if err != nil {
			return nil, err
		}
		spec.Counts = counts
	}
	return sched.GenerateRank(spec, c.Rank)
}

// Run measures every algorithm at every size, in lockstep with the other
// ranks, and returns the rows (complete on rank 0; other ranks get them
// too since statistics are gathered everywhere). Unsupported (algorithm,
// size) pairs are skipped silently: the launcher reports them.
func Run(ctx context.Context, cfg Config, t Transport, ctrl Ctrl) ([]Row, error) {
	var rows []Row
	for _, alg := range cfg.Algorithms {
		for _, size := range cfg.Sizes {
			plan, err := cfg.Plan(alg, size)
			if sched.IsUnsupported(err) {
				continue
			}
			if err != nil {
				return rows, err
			}
			row, err := runOne(ctx, &cfg, plan, t, ctrl)
			if err != nil {
				return rows, err
			}
			rows = append(rows, row)
			if cfg.Rank == 0 && cfg.OnRow != nil {
				cfg.OnRow(row)
			}
		}
	}
	return rows, nil
}

func runOne(ctx context.Context, cfg *Config, plan *sched.Plan, t Transport, ctrl Ctrl) (Row, error) {
	rank := cfg.Rank
	prog := &plan.Ranks[rank]
	pat := &Pattern{Coll: cfg.Collective, Dtype: cfg.Dtype, Op: cfg.Op, NRanks: plan.NRanks, Bytes: plan.Bytes, Counts: plan.Counts, Root: cfg.Root}
	if !cfg.Collective.Reduces() {
		pat.Dtype = coll.Uint8
	}
	mem := cfg.Memory
	if mem == nil {
		mem = newHostMemory(cfg.Alloc, cfg.Free)
	}
	z := prog.Sizes
	if z.Dst != pat.DstBytes(rank) {
		return Row{}, fmt.Errorf("%s/%s: plan gives rank %d a %d-byte dst, the collective needs %d", plan.Collective, plan.Algorithm, rank, z.Dst, pat.DstBytes(rank))
	}
	var (
		bufs exec.Buffers
		err  error
	)
	for _, b := range []struct {
		r *exec.Region
		n int64
	}{{&bufs.Src, z.Src}, {&bufs.Dst, z.Dst}, {&bufs.Scratch, z.Scratch}} {
		r, err := mem.Alloc(b.n)
		if err != nil {
			return Row{}, fmt.Errorf("rank %d: %d-byte buffer: %w", rank, b.n, err)
		}
		defer func() { _ = mem.Free(r) }()
		*b.r = r
	}
	dtype, op := cfg.Collective.Reduction(cfg.Dtype, cfg.Op)
	ecfg := exec.ConfigFor(plan, dtype, op)
	if ecfg.Local, err = mem.NewLocal(); err != nil {
		return Row{}, err
	}
	if c, ok := ecfg.Local.(interface{ Close() error }); ok {
		defer func() { _ = c.Close() }()
	}
	m, err := exec.New(prog, bufs, ecfg)
	if err != nil {
		return Row{}, err
	}
	// Patterns are made and checked in host memory; on a device they are
	// staged through these (outside the timed region).
	var hostSrc, hostDst []byte
	if !bufs.Src.IsHost() {
		hostSrc, hostDst = make([]byte, z.Src), make([]byte, z.Dst)
	} else {
		hostSrc, hostDst = bufs.Src.Bytes(), bufs.Dst.Bytes()
	}
	timed, skip := Iterations(plan.Bytes, cfg.Iters, cfg.Warmup)
	timeout := cfg.CallTimeout
	if timeout <= 0 {
		timeout = exec.TimeoutFor(z.Dst + z.Src)
	}
	fillSrc := func(it int) error {
		if pat.Coll == coll.Bcast && rank != cfg.Root {
			return nil
		}
		pat.FillSrc(hostSrc[:pat.SrcBytes(rank)], rank, it)
		if bufs.Src.IsHost() {
			return nil
		}
		return mem.Write(bufs.Src, hostSrc[:pat.SrcBytes(rank)])
	}
	if !cfg.Validate {
		if err := fillSrc(0); err != nil {
			return Row{}, err
		}
	}
	if _, err := ctrl.Allgather(ctx, nil); err != nil {
		return Row{}, err
	}
	var total time.Duration
	for it := 0; it < timed+skip; it++ {
		if cfg.Validate {
			if err := fillSrc(it); err != nil {
				return Row{}, err
			}
		}
		if cfg.StragglerDelay > 0 && rank == cfg.Straggler {
			time.Sleep(cfg.StragglerDelay)
		}
		t.NextCall()
		start := time.Now()
		err := exec.Run(ctx, m, t, start.Add(timeout))
		elapsed := time.Since(start)
		if err != nil {
			return Row{}, err
		}
		if cfg.Validate {
			if !bufs.Dst.IsHost() {
				if err := mem.Read(hostDst, bufs.Dst); err != nil {
					return Row{}, err
				}
			}
			if err := pat.Check(hostDst, rank, it); err != nil {
				return Row{}, fmt.Errorf("%s/%s %d bytes: %w", plan.Collective, plan.Algorithm, plan.Bytes, err)
			}
		}
		if it >= skip {
			total += elapsed
		}
		if err := Barrier(ctx, t, rank, plan.NRanks, start.Add(timeout)); err != nil {
			return Row{}, err
		}
		if rank == 0 && cfg.OnIteration != nil {
			cfg.OnIteration()
		}
	}
	avgUS := float64(total.Nanoseconds()) / 1e3 / float64(max(timed, 1))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(avgUS))
	all, err := ctrl.Allgather(ctx, b[:])
	if err != nil {
		return Row{}, err
	}
	per := make([]float64, len(all))
	for r, d := range all {
		if len(d) != 8 {
			return Row{}, fmt.Errorf("rank %d sent a %d-byte timing, want 8", r, len(d))
		}
		per[r] = math.Float64frombits(binary.LittleEndian.Uint64(d))
	}
	s := Summarize(per)
	// A call too fast for the clock (0 us) has no bus bandwidth: the row
	// says 0.
	busbw, _ := coll.BusBandwidthGBps(plan.Collective, plan.NRanks, plan.Bytes, plan.Counts, s.AvgUS)
	return Row{
		Collective: string(plan.Collective), Algorithm: plan.Algorithm, Bytes: plan.Bytes,
		AvgUS: s.AvgUS, MinUS: s.MinUS, MaxUS: s.MaxUS, Iterations: timed,
		BusBWGBps: busbw,
		Validated: cfg.Validate, Mem: memName(bufs.Dst.Mem()),
	}, nil
}

// BarrierTagBase is the highest step tag; barrier round k uses
// BarrierTagBase-k, above any tag a generator uses.
const BarrierTagBase = 1<<24 - 1

// barrierToken marks the barrier's own operations (the executor's tokens
// never set the top bit).
const barrierToken = uint64(1) << 63

// Barrier is a dissemination barrier over the data plane (ceil(log2 n)
// rounds of empty messages), used between timed iterations as OMB uses
// MPI_Barrier. It starts a call of its own (NextCall).
func Barrier(ctx context.Context, t Transport, rank, n int, deadline time.Time) error {
	if n <= 1 {
		return nil
	}
	t.NextCall()
	var comps [4]exec.Completion
	for k, round := 1, 0; k < n; k, round = k*2, round+1 {
		to, from := (rank+k)%n, (rank-k+n)%n
		tag := uint32(BarrierTagBase - round)
		rt, st := barrierToken|uint64(round)<<1, barrierToken|uint64(round)<<1|1
		if err := t.PostRecv(&exec.Post{Peer: from, Tag: tag, Buf: exec.HostRegion(nil), Token: rt}); err != nil {
			return fmt.Errorf("barrier round %d: %w", round, err)
		}
		if err := t.PostSend(&exec.Post{Peer: to, Tag: tag, Buf: exec.HostRegion(nil), Token: st}); err != nil {
			_ = t.Cancel(rt)
			return fmt.Errorf("barrier round %d: %w", round, err)
		}
		pending := 2
		for pending > 0 {
			if err := ctx.Err(); err != nil {
				_ = t.Cancel(rt)
				_ = t.Cancel(st)
				return err
			}
			if !time.Now().Before(deadline) {
				_ = t.Cancel(rt)
				_ = t.Cancel(st)
				return fmt.Errorf("barrier round %d: rank %d waited for rank %d past the deadline: %w", round, rank, from, exec.ErrDeadline)
			}
			wait := deadline
			if ctx.Done() != nil && time.Until(wait) > 50*time.Millisecond {
				wait = time.Now().Add(50 * time.Millisecond)
			}
			got, err := t.Wait(wait, comps[:0])
			if err != nil {
				return fmt.Errorf("barrier round %d: %w", round, err)
			}
			for _, c := range got {
				if c.Token != rt && c.Token != st {
					continue // a stale completion of a cancelled operation
				}
				if c.Err != nil {
					return fmt.Errorf("barrier round %d: %w", round, c.Err)
				}
				pending--
			}
		}
	}
	return nil
}

// memName is the memory kind of a result row, without the device number
// (ranks of one row use different GPUs).
func memName(m exec.Mem) string {
	s := m.String()
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i]
	}
	return s
}
