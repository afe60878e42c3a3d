package team

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/direct"
)

// A direct runner's call goes back to its team when its Coll ends
// cleanly and serves the team's next runner; a failed call's is dropped
// (its state is not to be trusted), and the team keeps a bounded few.
func TestDirectCallsAreReusedAfterCleanEnds(t *testing.T) {
	tm := &Team{}
	c := &Coll{team: tm}
	r := &directRunner{c: c, call: tm.directCall()}
	first := r.call
	r.release(true)
	assert.Nil(t, r.call, "a released runner keeps no call")
	next := &directRunner{c: c, call: tm.directCall()}
	assert.Same(t, first, next.call, "the next runner takes the call given back")

	next.release(false)
	assert.Empty(t, tm.directFree, "a failed call's is dropped")
	assert.NotSame(t, first, tm.directCall(), "and never handed out again")

	for i := 0; i < 2*directKeep; i++ {
		(&directRunner{c: c, call: new(direct.Call)}).release(true)
	}
	assert.Len(t, tm.directFree, directKeep)
}
