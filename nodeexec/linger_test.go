package nodeexec

import (
	"testing"
	"time"
)

// The linger a call's kernel gets: the configured one for a call that
// came within it of the last call's end; none after a longer gap, on a
// shared GPU, before the first call's end, or with the linger off; and
// after a kernel waited in vain, none for the next 1, 3, 7, ... calls (at
// most maxBackOff), until a call is handed over again.
func TestLingerAfter(t *testing.T) {
	const linger = 50 * time.Microsecond
	now := time.Now()
	l := &Local{linger: linger}
	if got := l.lingerAfter(now); got != 0 {
		t.Errorf("before any call ended: linger %v, want none", got)
	}
	l.lastEnd = now.Add(-10 * time.Microsecond)
	if got := l.lingerAfter(now); got != linger {
		t.Errorf("back to back: linger %v, want %v", got, linger)
	}
	if got := l.lingerAfter(now.Add(time.Millisecond)); got != 0 {
		t.Errorf("after a gap of 1ms: linger %v, want none", got)
	}
	l.shared = true
	if got := l.lingerAfter(now); got != 0 {
		t.Errorf("on a shared GPU: linger %v, want none", got)
	}
	l.shared = false
	l.SetLinger(0)
	if got := l.lingerAfter(now); got != 0 {
		t.Errorf("linger off: %v", got)
	}
	l.SetLinger(linger)
	for _, skip := range []int{1, 3, 7, 15, 31, 63, 64, 64} {
		l.backOff()
		for i := range skip {
			if got := l.lingerAfter(now); got != 0 {
				t.Fatalf("back-off of %d: call %d lingers %v", skip, i+1, got)
			}
		}
		if got := l.lingerAfter(now); got != linger {
			t.Fatalf("after a back-off of %d calls: linger %v, want %v", skip, got, linger)
		}
	}
}
