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
	return runLanes(ctx, ms, ts, func(ctx context.Context, w int) error { return Run(ctx, ms[w], ts[w], deadline) })
}

// RunLanesWatched is RunLanes for a caller that waits for its peers as
// long as they live (the UCC team layer): a zero deadline is none, as in
// Call.Begin, and every lane checks its peers with watch while it waits
// (nil: no checks; watch must be safe for concurrent use).
func RunLanesWatched(ctx context.Context, ms []*Machine, ts []Transport, deadline time.Time, watch Watch) error {
	return runLanes(ctx, ms, ts, func(ctx context.Context, w int) error {
		var c Call
		c.SetWatch(watch)
		if err := c.Begin(ms[w], ts[w], deadline); err != nil {
			return err
		}
		for {
			done, err := c.Progress(time.Now().Add(pollSlice))
			if err != nil || done {
				return err
			}
			if err := ctx.Err(); err != nil {
				return c.Abort(err)
			}
		}
	})
}

// runLanes runs lane w with run(ctx, w), each lane but 0 on a goroutine of
// its own, and joins them; see RunLanes for the errors.
func runLanes(ctx context.Context, ms []*Machine, ts []Transport, run func(ctx context.Context, w int) error) error {
	if len(ms) != len(ts) {
		return fmt.Errorf("exec: %d lane machines for %d transports", len(ms), len(ts))
	}
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu    sync.Mutex
		first *LaneError
		wg    sync.WaitGroup
	)
	lane := func(w int) {
		if ms[w] == nil {
			return
		}
		err := run(lctx, w)
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
			lane(w)
		}(w)
	}
	if len(ms) > 0 {
		lane(0)
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return nil
}
