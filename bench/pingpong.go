package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// PingPong measures the one-way time of a message between ranks 0 and 1
// the way osu_latency does: rank 0 sends n bytes, rank 1 receives them and
// sends them back, and half the round trip, averaged over the timed
// iterations, is the latency. Iteration counts are OMB's unless given
// (Iterations). Each round trip is an exec program of two steps per rank,
// so it runs through the same executor, deadlines and transport as every
// collective. Rank 0 checks that the echo is byte-for-byte what it sent.
//
// Ranks other than 0 and 1 return at once with no result. Rank 0's
// latencies are the measurement; rank 1 returns its own view of the same
// round trips (from each receive being posted to the echo leaving).
func PingPong(ctx context.Context, t Transport, rank int, sizes []int64, iters, warmup int, alloc func(int) []byte, free func([]byte) error) ([]float64, error) {
	if rank > 1 {
		return nil, nil
	}
	if alloc == nil {
		alloc = func(n int) []byte { return make([]byte, n) }
		free = func([]byte) error { return nil }
	}
	lat := make([]float64, len(sizes))
	for i, n := range sizes {
		us, err := pingPongSize(ctx, t, rank, n, iters, warmup, alloc, free)
		if err != nil {
			return nil, fmt.Errorf("ping-pong %d bytes: %w", n, err)
		}
		lat[i] = us
	}
	return lat, nil
}

// pingPongProgram is rank's half of one round trip of n bytes: rank 0
// sends src and receives the echo into dst; rank 1 receives into dst and
// sends dst back.
func pingPongProgram(rank int, n int64) *sched.RankProgram {
	p := &sched.RankProgram{Rank: rank, Sizes: sched.Sizes{Src: n, Dst: n}}
	if rank == 0 {
		s := p.Send(1, 0, sched.At(sched.BufSrc, 0), n, sched.Path{})
		p.Recv(1, 1, sched.At(sched.BufDst, 0), n, s)
		return p
	}
	r := p.Recv(0, 0, sched.At(sched.BufDst, 0), n)
	p.Send(0, 1, sched.At(sched.BufDst, 0), n, sched.Path{}, r)
	return p
}

func pingPongSize(ctx context.Context, t Transport, rank int, n int64, iters, warmup int, alloc func(int) []byte, free func([]byte) error) (float64, error) {
	src, dst := alloc(int(n)), alloc(int(n))
	defer func() {
		_ = free(src)
		_ = free(dst)
	}()
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	m, err := exec.New(pingPongProgram(rank, n), exec.HostBuffers(src, dst, nil), exec.Config{Collective: coll.Collective("pingpong"), Algorithm: "osu_latency", NRanks: 2})
	if err != nil {
		return 0, err
	}
	timed, skip := Iterations(n, iters, warmup)
	timeout := exec.TimeoutFor(2 * n)
	var total time.Duration
	for it := 0; it < timed+skip; it++ {
		t.NextCall()
		start := time.Now()
		if err := exec.Run(ctx, m, t, start.Add(timeout)); err != nil {
			return 0, err
		}
		if it >= skip {
			total += time.Since(start)
		}
	}
	if rank == 0 {
		for i := range dst {
			if dst[i] != src[i] {
				return 0, fmt.Errorf("echo differs at byte %d: got %#x, sent %#x", i, dst[i], src[i])
			}
		}
	}
	return float64(total.Nanoseconds()) / 1e3 / float64(max(timed, 1)) / 2, nil
}
