package exec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// LaneError is why a call on lanes failed: the lane whose own work failed
// first (the others were stopped because of it) and its error.
type LaneError struct {
	Lane int
	Err  error
}

func (e *LaneError) Error() string { return fmt.Sprintf("lane %d: %v", e.Lane, e.Err) }
func (e *LaneError) Unwrap() error { return e.Err }

// RunLanes runs one call on several lanes of a rank (Multi-lane, §3): lane
// w drives ms[w] over ts[w], each on its own goroutine (lane 0 on the
// caller's), so each lane posts, waits and reduces in parallel with the
// others. A nil machine is a lane with nothing to do. RunLanes returns
// when every lane has returned, so no goroutine outlives the call. The
// first lane to fail stops the others (their calls are aborted, their
// operations cancelled) and the error is a *LaneError naming it; a peer's
// lane that waits for it fails by its own deadline, naming the same lane.
func RunLanes(ctx context.Context, ms []*Machine, ts []Transport, deadline time.Time) error {
	if len(ms) != len(ts) {
		return fmt.Errorf("exec: %d lane machines for %d transports", len(ms), len(ts))
	}
	if len(ms) == 1 {
		if ms[0] == nil {
			return nil
		}
		if err := Run(ctx, ms[0], ts[0], deadline); err != nil {
			return &LaneError{Lane: 0, Err: err}
		}
		return nil
	}
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu    sync.Mutex
		first *LaneError
		wg    sync.WaitGroup
	)
	run := func(w int) {
		if ms[w] == nil {
			return
		}
		err := Run(lctx, ms[w], ts[w], deadline)
		if err == nil {
			return
		}
		mu.Lock()
		// A lane stopped because another failed reports that one.
		if first == nil && !(errors.Is(err, context.Canceled) && lctx.Err() != nil && ctx.Err() == nil) {
			first = &LaneError{Lane: w, Err: err}
		}
		mu.Unlock()
		stop()
	}
	for w := 1; w < len(ms); w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			run(w)
		}(w)
	}
	run(0)
	wg.Wait()
	if first != nil {
		return first
	}
	return nil
}
