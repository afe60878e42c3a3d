package sim

// Event kinds.
const (
	evActivate uint8 = iota + 1 // a flow's startup is over: it joins its links
	evDone                      // a flow's last byte arrives (if ver still holds)
)

type event struct {
	t    float64
	seq  uint64 // insertion order breaks ties, so runs are deterministic
	flow int32
	ver  uint32
	kind uint8
}

func (a *event) before(b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

// eventHeap is a 4-ary min-heap on (t, seq), typed to avoid the interface
// calls of container/heap on the simulator's hottest path; four children
// per node halve the depth, and siblings share a cache line.
//
// A flow has at most one completion event in the heap: rescheduling it
// (a rate change) moves its entry rather than leaving a stale one behind.
// With stale entries, n flows sharing a link left O(n^2) events after n
// arrivals and departures (a rank's thousands of small copies grew the
// heap to gigabytes); live events keep their (t, seq), so runs are the
// same either way.
type eventHeap struct {
	h    []event
	done []int32 // done[flow]: index of the flow's completion event, -1 none
}

func (q *eventHeap) Len() int { return len(q.h) }

func (q *eventHeap) push(ev event) {
	if ev.kind == evDone {
		for int(ev.flow) >= len(q.done) {
			q.done = append(q.done, -1)
		}
		if i := q.done[ev.flow]; i >= 0 {
			q.h[i] = ev
			q.fix(int(i))
			return
		}
	}
	q.h = append(q.h, ev)
	q.place(len(q.h) - 1)
	q.up(len(q.h) - 1)
}

// place records where entry i lies, for a completion event.
func (q *eventHeap) place(i int) {
	if q.h[i].kind == evDone {
		q.done[q.h[i].flow] = int32(i)
	}
}

func (q *eventHeap) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.place(i)
	q.place(j)
}

func (q *eventHeap) up(i int) int {
	for i > 0 {
		p := (i - 1) / 4
		if !q.h[i].before(&q.h[p]) {
			break
		}
		q.swap(i, p)
		i = p
	}
	return i
}

func (q *eventHeap) down(i int) {
	n := len(q.h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if q.h[k].before(&q.h[m]) {
				m = k
			}
		}
		if !q.h[m].before(&q.h[i]) {
			break
		}
		q.swap(i, m)
		i = m
	}
}

// fix restores the heap after entry i changed.
func (q *eventHeap) fix(i int) {
	if q.up(i) == i {
		q.down(i)
	}
}

func (q *eventHeap) pop() event {
	top := q.h[0]
	if top.kind == evDone {
		q.done[top.flow] = -1
	}
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	if n > 0 {
		q.place(0)
		q.down(0)
	}
	return top
}
