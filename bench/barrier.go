package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/exec"
)

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
