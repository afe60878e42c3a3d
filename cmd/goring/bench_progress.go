package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/units"
)

// progressEvery is how often rank 0 rewrites its progress line at most
// (a new size is shown at once).
const progressEvery = 100 * time.Millisecond

// progressLine is rank 0's progress on a terminal: one line on stderr,
// rewritten in place (carriage return, spaces over what is left of the
// line before), cleared before each table row and at the end. It is
// drawn only where stderr is a terminal (newProgressLine gives nil
// elsewhere), so logs, pipes and --json's stdout never see it.
type progressLine struct {
	w     io.Writer
	coll  string
	width int // the terminal's columns; 0: unknown
	now   func() time.Time
	start time.Time
	last  time.Time // when the line was last written
	shown int       // its length on the screen; 0: cleared
	point [2]int    // the (algorithm, point) it shows
}

// newProgressLine is the progress line of goring bench coll on w, or nil
// when w is not a terminal.
func newProgressLine(w io.Writer, coll string) *progressLine {
	if !isTerminal(w) {
		return nil
	}
	width, _, err := term.GetSize(int(w.(*os.File).Fd()))
	if err != nil {
		width = 0
	}
	return &progressLine{w: w, coll: coll, width: width, now: time.Now, start: time.Now()}
}

// update shows p: at once when a new size starts, else at most every
// progressEvery.
func (l *progressLine) update(p bench.Progress) {
	if l == nil {
		return
	}
	now := l.now()
	point := [2]int{p.Alg, p.Point}
	if point == l.point && now.Sub(l.last) < progressEvery && p.Iter < p.Iters {
		return
	}
	l.point, l.last = point, now
	line := formatProgress(l.coll, p, now.Sub(l.start))
	if l.width > 1 && len(line) > l.width-1 {
		line = line[:l.width-1] // a wrapped line would not come back with \r
	}
	pad := max(l.shown-len(line), 0)
	fmt.Fprintf(l.w, "\r%s%s", line, strings.Repeat(" ", pad))
	if pad > 0 {
		fmt.Fprintf(l.w, "\r%s", line)
	}
	l.shown = len(line)
}

// clear blanks the line and puts the cursor at its start, for a table row
// or whatever comes next.
func (l *progressLine) clear() {
	if l == nil || l.shown == 0 {
		return
	}
	fmt.Fprintf(l.w, "\r%s\r", strings.Repeat(" ", l.shown))
	l.shown = 0
	l.point = [2]int{}
}

// formatProgress is the line's text, such as
//
//	bench allreduce: ring (1/3), 4MiB (3/5): iteration 37/110 (warm-up 10), 1m12s
func formatProgress(coll string, p bench.Progress, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "bench %s: %s (%d/%d), %s", coll, p.Algorithm, p.Alg, p.Algs, units.FormatBytes(p.Bytes))
	if p.Lanes > 0 {
		fmt.Fprintf(&b, " on %d lanes", p.Lanes)
	}
	fmt.Fprintf(&b, " (%d/%d): iteration %d/%d", p.Point, p.Points, p.Iter, p.Iters)
	if p.Iter < p.Warmup {
		fmt.Fprintf(&b, " (warm-up %d)", p.Warmup)
	}
	fmt.Fprintf(&b, ", %s", elapsed.Round(time.Second))
	return b.String()
}

// isTerminal reports whether w is a terminal: the progress line is drawn
// only there, so logs and captured stderr stay clean.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
