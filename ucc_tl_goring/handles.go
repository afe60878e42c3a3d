//go:build ucc

package main

import (
	"sync"

	"github.com/goring-hpc/goring/team"
)

// handles maps the 64-bit handles C holds to Go objects. C never holds a
// Go pointer (the cgo rules forbid it past a call), and an unknown or
// stale handle is an error, not a crash.
var handles struct {
	sync.Mutex
	next uint64
	objs map[uint64]any
}

func newHandle(obj any) uint64 {
	handles.Lock()
	defer handles.Unlock()
	if handles.objs == nil {
		handles.objs = map[uint64]any{}
	}
	handles.next++
	handles.objs[handles.next] = obj
	return handles.next
}

// lookup returns the object of h if it is a T.
func lookup[T any](h uint64) (T, bool) {
	handles.Lock()
	defer handles.Unlock()
	obj, ok := handles.objs[h].(T)
	return obj, ok
}

func dropHandle(h uint64) {
	handles.Lock()
	delete(handles.objs, h)
	handles.Unlock()
}

// teamHandle gives t a handle, which t keeps: its C side is listed under
// it (cpathTable).
func teamHandle(t *team.Team) uint64 {
	h := newHandle(t)
	t.SetHandle(h)
	return h
}
