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
type eventHeap struct{ h []event }

func (q *eventHeap) Len() int { return len(q.h) }

func (q *eventHeap) push(ev event) {
	q.h = append(q.h, ev)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !q.h[i].before(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventHeap) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	i := 0
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
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}
