package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
)

func TestFormatProgress(t *testing.T) {
	p := bench.Progress{Algorithm: "rabenseifner", Alg: 2, Algs: 3, Bytes: 4 << 20, Point: 3, Points: 5, Iter: 37, Iters: 110, Warmup: 10}
	assert.Equal(t, "bench allreduce: rabenseifner (2/3), 4MiB (3/5): iteration 37/110, 1m12s",
		formatProgress("allreduce", p, 72*time.Second+300*time.Millisecond))
	p.Iter, p.Lanes = 4, 2
	assert.Equal(t, "bench allreduce: rabenseifner (2/3), 4MiB on 2 lanes (3/5): iteration 4/110 (warm-up 10), 0s",
		formatProgress("allreduce", p, 0))
}

// Where stderr is not a terminal (a buffer, a pipe, a file) there is no
// line, and a nil line does nothing.
func TestProgressLineOnlyOnATerminal(t *testing.T) {
	assert.Nil(t, newProgressLine(&bytes.Buffer{}, "allgather"))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.Nil(t, newProgressLine(w, "allgather"))
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	assert.Nil(t, newProgressLine(f, "allgather"))
	var l *progressLine
	l.update(bench.Progress{})
	l.clear()
}

// screen is what a terminal shows of w's writes on one line: each
// carriage return moves back to its start, characters overwrite.
type screen struct {
	line   []byte
	cursor int
	writes int
}

func (s *screen) Write(b []byte) (int, error) {
	s.writes++
	for _, c := range b {
		if c == '\r' {
			s.cursor = 0
			continue
		}
		if c == '\n' {
			panic("the progress line printed a newline")
		}
		if s.cursor == len(s.line) {
			s.line = append(s.line, c)
		} else {
			s.line[s.cursor] = c
		}
		s.cursor++
	}
	return len(b), nil
}

// shows is the line's text without trailing blanks, and whether the
// cursor is at its end (or at the start of a blank line).
func (s *screen) shows() (string, bool) {
	text := strings.TrimRight(string(s.line), " ")
	return text, s.cursor == len(text) || (text == "" && s.cursor == 0)
}

// The line is written over itself: at once for a new size, at most every
// progressEvery within one (and at its last iteration), covering a longer
// line before it, cut to the terminal's width, and cleared to blanks.
func TestProgressLineRewritesItself(t *testing.T) {
	sc := &screen{}
	now := time.Unix(1000, 0)
	l := &progressLine{w: sc, coll: "allgather", width: 200, now: func() time.Time { return now }, start: now}
	p := bench.Progress{Algorithm: "ring", Alg: 1, Algs: 1, Bytes: 1 << 20, Point: 1, Points: 2, Iters: 12, Warmup: 2}
	check := func(want string, msg string) {
		t.Helper()
		got, atEnd := sc.shows()
		assert.Equal(t, want, got, msg)
		assert.True(t, atEnd, "%s: the cursor is at the end of the text", msg)
	}

	l.update(p)
	check(formatProgress("allgather", p, 0), "a size's first")
	shown, writes := formatProgress("allgather", p, 0), sc.writes
	p.Iter = 1
	now = now.Add(progressEvery / 2)
	l.update(p)
	check(shown, "within progressEvery of the last")
	assert.Equal(t, writes, sc.writes, "nothing written within progressEvery")
	now = now.Add(progressEvery)
	p.Iter = 5
	l.update(p)
	check(formatProgress("allgather", p, 0), "after progressEvery, shorter than the warm-up's")
	p.Iter = 12
	l.update(p)
	check(formatProgress("allgather", p, 0), "the last iteration is shown")

	p.Point, p.Bytes, p.Iter = 2, 1, 0
	l.update(p)
	check(formatProgress("allgather", p, 0), "a new size at once")

	l.clear()
	check("", "cleared")
	writes = sc.writes
	l.clear()
	assert.Equal(t, writes, sc.writes, "cleared once")

	l.width = 20
	l.update(p)
	check(formatProgress("allgather", p, 0)[:19], "cut to the width")
}
