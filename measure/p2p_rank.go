package measure

import (
	"context"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/cudaexec"
)

// P2PRank is one of goring bench p2p's two ranks once it joined its job
// (JoinP2P): its data plane, its GPU, and the runs (P2P) once they are
// made. Rank 0 writes the report between Run and Finish; Close releases
// the rank's runs, GPU and job, newest first.
type P2PRank struct {
	rank int
	rj   *bench.RankJob
	g    *cudaexec.GPU
	runs *P2P
}

// JoinP2P joins the rank's job over one lane that moves device memory
// (bench.JoinLanes) and opens its GPU, rank % gpus (bench.OpenRankGPU,
// polled every poll).
func JoinP2P(ctx context.Context, j bench.Join, gpus int, poll time.Duration) (*P2PRank, error) {
	rank := j.Role.Rank
	j.Local = rank
	rj, err := bench.JoinLanes(ctx, j, true, 1)
	if err != nil {
		return nil, err
	}
	g, err := bench.OpenRankGPU(gpus, rank, poll)
	if err != nil {
		rj.Close()
		return nil, err
	}
	return &P2PRank{rank: rank, rj: rj, g: g}, nil
}

// Run makes the rank's engine and buffers (NewP2P), measures every size
// with the other rank (P2P.Report) and passes a barrier of both: rank 0's
// report is then the run's.
func (p *P2PRank) Run(ctx context.Context, sizes []int64, iters, warmup int) (*P2PReport, error) {
	r, top, err := NewP2P(p.rank, p.rj.Tr, p.rj.Sess, p.g, sizes, iters, warmup)
	if err != nil {
		return nil, err
	}
	p.runs = r
	rep, err := r.Report(ctx, sizes, top)
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", p.rank, err)
	}
	if err := p.rj.Sess.Barrier(ctx); err != nil {
		return nil, err
	}
	return rep, nil
}

// Ordinal is the rank's GPU's ordinal.
func (p *P2PRank) Ordinal() int { return p.g.Device().Ordinal() }

// Finish tells the coordinator this rank is done and waits for the job's
// end (bench.RankJob.Finish).
func (p *P2PRank) Finish() error { return p.rj.Finish() }

// Close releases the runs, the GPU and the job, newest first.
func (p *P2PRank) Close() {
	if p.runs != nil {
		p.runs.Close()
	}
	_ = p.g.Close()
	p.rj.Close()
}
