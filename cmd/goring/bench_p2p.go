package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/calib/measure"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
	"github.com/goring-hpc/goring/units"
)

// goring bench p2p: one GPU-to-GPU transfer between two processes, like
// osu_bw (rank 0 sends a window of messages, rank 1 acknowledges) and
// osu_bibw (both send), over every way goring has to move it: the direct
// push alone, UCX's cuda_ipc, the multi-path model's split, and the best
// static split the run finds by trying host shares in 1% steps. The model
// is fitted in the same run (Multi-path model, section 4: Hockney figures
// per hop), so its prediction is checked against what it is built from.

// p2pWindows are the window sizes, as osu_bw's default 64 is too many for
// 1 GiB messages on one GPU: 1 (latency-bound, the model's own case) and 16.
var p2pWindows = []int{1, 16}

// p2pFitSizes are the sizes of the direct path's calibration samples,
// over the range the table covers: the copy's bandwidth still rises from
// 256 MiB to 1 GiB, and a line fitted below that range under-predicted
// the top by 9%.
var p2pFitSizes = []int64{1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30}

// runP2P is `goring bench p2p`: the launcher checks and starts two ranks.
func runP2P(cmd *cobra.Command, f *benchFlags) error {
	if launch.IsRank() {
		return p2pRank(cmd, f)
	}
	if f.mem != "cuda" {
		return fmt.Errorf("bench p2p measures GPU paths: it needs --mem cuda")
	}
	if f.calibration != "" {
		return fmt.Errorf("--calibration is for collectives: bench p2p fits the paths it measures in the same run")
	}
	if f.calibrationOut != "" {
		if dir := filepath.Dir(f.calibrationOut); dir != "" {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return fmt.Errorf("--calibration-out %s: no folder %s to write it in", f.calibrationOut, dir)
			}
		}
	}
	if f.np == 0 {
		f.np = 2
		_ = cmd.Flags().Set("np", "2")
	}
	if f.np != 2 {
		return fmt.Errorf("bench p2p runs 2 processes, not --np %d", f.np)
	}
	if _, err := units.ParseRange(f.bytes); err != nil {
		return fmt.Errorf("--bytes: %w", err)
	}
	if err := checkBenchMem(f); err != nil {
		return err
	}
	if err := ucx.Load(); err != nil {
		return fmt.Errorf("cannot load UCX: %w", err)
	}
	args := []string{"bench", "p2p"}
	cmd.Flags().Visit(func(fl *pflag.Flag) { args = append(args, "--"+fl.Name+"="+fl.Value.String()) })
	return launch.RunLocal(cmd.Context(), launch.LocalJob{NP: 2, Args: args, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
}

// p2pRun is one rank's state.
type p2pRun struct {
	rank     int
	tr       *ucxmp.Transport
	eng      *cudaexec.Engine
	sameHost func(int) bool
	src, dst exec.Region
	ack      []byte
	iters    int
	warmup   int
}

// p2pRank is one of the two ranks: join, set up the buffers and the
// engine, fit the model, check contents, measure every row; rank 0 prints.
func p2pRank(cmd *cobra.Command, f *benchFlags) error {
	role, err := launch.FromEnv()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	sizes, err := units.ParseRange(f.bytes)
	if err != nil {
		return err
	}
	rj, err := joinRankJob(ctx, role, 0, role.Rank, cmd.ErrOrStderr(), true, 1)
	if err != nil {
		return err
	}
	defer rj.close()
	mem, closeMem, err := rankMemory(f, role.Rank)
	if err != nil {
		return err
	}
	defer closeMem()
	g := mem.(*cudaexec.GPU)
	r, top, err := newP2PRun(f, rj, role.Rank, g, sizes)
	if err != nil {
		return err
	}
	defer r.close()
	rep, err := r.report(ctx, rj, g, sizes, top)
	if err != nil {
		return fmt.Errorf("rank %d: %w", role.Rank, err)
	}
	if err := rj.sess.Barrier(ctx); err != nil {
		return err
	}
	if role.Rank == 0 {
		if err := writeP2P(cmd.OutOrStdout(), f, rep); err != nil {
			return err
		}
		if f.png != "" {
			if err := writeP2PPNGFile(f.png, rep); err != nil {
				return err
			}
		}
		if f.calibrationOut != "" {
			g1, err := rankGPU(f, 1)
			if err != nil {
				return err
			}
			if err := writeP2PCalibration(f.calibrationOut, rep, g.Device().Ordinal(), g1); err != nil {
				return err
			}
		}
	}
	return rj.finish()
}

// newP2PRun makes the rank's engine and buffers, as large as the largest
// size measured or fitted (top).
func newP2PRun(f *benchFlags, rj *rankJob, rank int, g *cudaexec.GPU, sizes []int64) (*p2pRun, int64, error) {
	top := sizes[len(sizes)-1]
	for _, s := range p2pFitSizes {
		top = max(top, s)
	}
	r := &p2pRun{rank: rank, tr: rj.tr, eng: cudaexec.NewEngine(), ack: ucx.Alloc(8), iters: f.iters, warmup: f.warmup}
	if r.iters <= 0 {
		r.iters = 10
	}
	if r.warmup < 0 {
		r.warmup = 3
	}
	peers := rj.sess.Peers()
	r.sameHost = func(p int) bool { return peers[p].Host == peers[rank].Host }
	var err error
	if r.src, err = g.Alloc(top); err == nil {
		r.dst, err = g.Alloc(top)
	}
	if err != nil {
		r.close()
		return nil, 0, err
	}
	return r, top, nil
}

func (r *p2pRun) close() {
	_ = r.eng.Close()
	ucx.Free(r.ack)
}

// report fits the model (paths, then contention), checks contents, and
// measures every (direction, window, size).
func (r *p2pRun) report(ctx context.Context, rj *rankJob, g *cudaexec.GPU, sizes []int64, top int64) (*p2pReport, error) {
	fits, err := r.calibrate(ctx, rj, g)
	if err != nil {
		return nil, err
	}
	opts := model.DefaultOptions()
	paths := calib.P2PPaths(fits.Direct, fits.D2H, fits.H2D, opts)
	gamma, together, err := r.contention(ctx, rj, paths, opts)
	if err != nil {
		return nil, err
	}
	fits.DirectSlowdown, fits.Together = gamma, together
	checked, err := r.checkContents(ctx, rj, g, paths, opts, top)
	if err != nil {
		return nil, err
	}
	rep := &p2pReport{Schema: "goring.p2p/v1", Fits: fits, Paths: paths, MaxSharePct: calib.P2PMaxShare, Checked: checked}
	for _, bidir := range []bool{false, true} {
		for _, w := range p2pWindows {
			for _, n := range sizes {
				row, err := r.row(paths, opts, gamma, n, w, bidir)
				if err != nil {
					return nil, fmt.Errorf("%d bytes, window %d: %w", n, w, err)
				}
				rep.Rows = append(rep.Rows, row)
			}
		}
	}
	return rep, nil
}

// contention measures the direct and host paths together at a few
// shares and fits the direct path's slowdown (rank 0's samples, shared).
func (r *p2pRun) contention(ctx context.Context, rj *rankJob, paths []model.Path, o model.Options) (float64, []calib.P2PSample, error) {
	samples := slices.Clone(calib.P2PTogether)
	for i := range samples {
		plan, err := mpath.Build(calib.StaticSplit(paths, samples[i].Bytes, samples[i].HostPct, o), r.eng.MaxStage())
		if err != nil {
			return 0, nil, err
		}
		if samples[i].TimeUS, err = r.measure(plan, false, samples[i].Bytes, 1, false); err != nil {
			return 0, nil, fmt.Errorf("contention sample %d%% of %d bytes: %w", samples[i].HostPct, samples[i].Bytes, err)
		}
	}
	var out struct {
		Gamma   float64
		Samples []calib.P2PSample
	}
	if r.rank == 0 {
		out.Gamma, out.Samples = calib.FitGamma(paths, o, samples), samples
	}
	b, _ := json.Marshal(out)
	all, err := rj.sess.Allgather(ctx, b)
	if err != nil {
		return 0, nil, err
	}
	if err := json.Unmarshal(all[0], &out); err != nil {
		return 0, nil, err
	}
	return out.Gamma, out.Samples, nil
}

// calibrate measures the direct push between the ranks and, on rank 0,
// each hop of the host path alone; rank 0's figures go to both ranks.
func (r *p2pRun) calibrate(ctx context.Context, rj *rankJob, g *cudaexec.GPU) (calib.P2PFits, error) {
	var fits calib.P2PFits
	// Warm the GPU first: its clocks ramp up under load, and figures
	// fitted on a cold GPU overstated the direct path's startup twofold
	// against the same run's later measurements.
	for _, n := range []int64{64 << 20, 1 << 20} {
		if _, err := r.measure(nil, false, n, 16, false); err != nil {
			return fits, err
		}
	}
	var direct []model.Sample
	for _, n := range p2pFitSizes {
		us, err := r.measure(nil, false, n, 1, false)
		if err != nil {
			return fits, err
		}
		direct = append(direct, model.Sample{Bytes: float64(n), TimeUS: us})
	}
	var err error
	if r.rank == 0 {
		if fits.Direct, err = model.FitHockney(direct); err != nil {
			return fits, fmt.Errorf("direct path fit: %w", err)
		}
		if fits.D2H, fits.H2D, err = measure.HostHopFits(g.Device(), r.src); err != nil {
			return fits, err
		}
	}
	b, _ := json.Marshal(fits)
	all, err := rj.sess.Allgather(ctx, b)
	if err != nil {
		return fits, err
	}
	return fits, json.Unmarshal(all[0], &fits)
}

// measure times transfers of n bytes, window w, one or both directions,
// and returns microseconds per message as rank 0 saw them (rank 1 returns
// 0). plan, when set, is the split rank 0 (and rank 1 when bidir) uses;
// viaUCX sends through UCX's own cuda_ipc instead of the push.
func (r *p2pRun) measure(plan *mpath.Plan, viaUCX bool, n int64, w int, bidir bool) (float64, error) {
	if plan != nil {
		r.eng.SetPlanner(func(int, int64, sched.Path) *mpath.Plan { return plan })
	} else {
		r.eng.SetPlanner(nil)
	}
	if viaUCX {
		r.tr.UseEngine(nil, nil)
	} else {
		r.tr.UseEngine(r.eng, r.sameHost)
	}
	var start time.Time
	for it := 0; it < r.warmup+r.iters; it++ {
		if it == r.warmup {
			start = time.Now()
		}
		if err := r.round(n, w, bidir); err != nil {
			return 0, err
		}
	}
	if r.rank != 0 {
		return 0, nil
	}
	return float64(time.Since(start).Nanoseconds()) / 1e3 / float64(r.iters*w), nil
}

// ackTag is the step tag of the acknowledgement (apart from the window's).
const ackTag = 1 << 20

// round is one iteration: the window's messages, then rank 1's
// acknowledgement, so rank 0's clock covers delivery.
func (r *p2pRun) round(n int64, w int, bidir bool) error {
	r.tr.NextCall()
	peer := 1 - r.rank
	sends := r.rank == 0 || bidir
	recvs := r.rank == 1 || bidir
	var want int
	tok := uint64(0)
	if recvs {
		for j := 0; j < w; j++ {
			tok++
			if err := r.tr.PostRecv(&exec.Post{Peer: peer, Tag: uint32(j), Buf: r.dst.Slice(0, n), Token: tok}); err != nil {
				return err
			}
			want++
		}
	}
	if sends {
		for j := 0; j < w; j++ {
			tok++
			if err := r.tr.PostSend(&exec.Post{Peer: peer, Tag: uint32(j), Buf: r.src.Slice(0, n), Token: tok}); err != nil {
				return err
			}
			want++
		}
	}
	if err := r.wait(want, n); err != nil {
		return err
	}
	ack := exec.HostRegion(r.ack)
	tok++
	if r.rank == 1 {
		if err := r.tr.PostSend(&exec.Post{Peer: 0, Tag: ackTag, Buf: ack, Token: tok}); err != nil {
			return err
		}
	} else if err := r.tr.PostRecv(&exec.Post{Peer: 1, Tag: ackTag, Buf: ack, Token: tok}); err != nil {
		return err
	}
	return r.wait(1, int64(len(r.ack)))
}

// wait collects want completions; receives must carry n bytes.
func (r *p2pRun) wait(want int, n int64) error {
	deadline := time.Now().Add(exec.TimeoutFor(n * 16))
	var got []exec.Completion
	for len(got) < want {
		var err error
		if got, err = r.tr.Wait(deadline, got); err != nil {
			return err
		}
		if !time.Now().Before(deadline) && len(got) < want {
			return fmt.Errorf("%d of %d transfers unfinished after %v", want-len(got), want, exec.TimeoutFor(n*16))
		}
	}
	for _, c := range got {
		if c.Err != nil {
			return c.Err
		}
		if c.Len != 0 && c.Len != n {
			return fmt.Errorf("a transfer delivered %d bytes, want %d", c.Len, n)
		}
	}
	return nil
}

// checkContents sends odd-sized messages through a forced split (the
// largest host share the search tries, its slots cycling where a share
// outgrows the engine's staging bound) and rank 1 compares every byte.
func (r *p2pRun) checkContents(ctx context.Context, rj *rankJob, g *cudaexec.GPU, paths []model.Path, o model.Options, top int64) ([]int64, error) {
	sizes := []int64{1<<20 + 3, 16<<20 + 5, top - 1}
	for _, n := range sizes {
		if n <= 0 || n > top {
			continue
		}
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i*131 + i>>9 + int(n))
		}
		if r.rank == 0 {
			if err := g.Write(r.src.Slice(0, n), want); err != nil {
				return nil, err
			}
		} else if err := g.Write(r.dst.Slice(0, n), make([]byte, n)); err != nil {
			return nil, err
		}
		if err := rj.sess.Barrier(ctx); err != nil {
			return nil, err
		}
		plan, err := mpath.Build(calib.StaticSplit(paths, n, calib.P2PMaxShare, o), r.eng.MaxStage())
		if err != nil {
			return nil, err
		}
		r.eng.SetPlanner(func(int, int64, sched.Path) *mpath.Plan { return plan })
		r.tr.UseEngine(r.eng, r.sameHost)
		if err := r.round(n, 1, false); err != nil {
			return nil, err
		}
		if r.rank == 1 {
			got := make([]byte, n)
			if err := g.Read(got, r.dst.Slice(0, n)); err != nil {
				return nil, err
			}
			for i := range got {
				if got[i] != want[i] {
					return nil, fmt.Errorf("contents: a %d-byte split transfer (%d%% on the host path) differs first at byte %d: %#x, want %#x", n, calib.P2PMaxShare, i, got[i], want[i])
				}
			}
		}
	}
	return sizes, rj.sess.Barrier(ctx)
}
