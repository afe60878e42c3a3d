package team

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A team on which the model claims nothing scores ErrDeclined, with the
// summary that says why, and the C status the shim acts on.
func TestScoresDeclineWhereTheModelClaimsNothing(t *testing.T) {
	ctxs := newLazyContexts(t, 2)
	for r, tm := range newLazyTeams(t, ctxs, 3) {
		str, summary, err := tm.Scores()
		if err == nil {
			t.Skipf("the model claims %q on a team of 2 here: nothing to decline", str)
		}
		require.ErrorIs(t, err, ErrDeclined, "rank %d", r)
		assert.Empty(t, str)
		assert.Contains(t, summary, "claims nothing")
		assert.Equal(t, StatusDeclined, StatusOf(err))
		require.NoError(t, tm.Destroy())
	}
}

// With scores=fixed the model is not asked, and nothing is declined: the
// user asked for the default score everywhere.
func TestFixedScoresNeverDecline(t *testing.T) {
	ctxs := newLazyContexts(t, 2)
	for _, c := range ctxs {
		c.opts.fixedScores = true
	}
	for r, tm := range newLazyTeams(t, ctxs, 3) {
		str, _, err := tm.Scores()
		require.NoError(t, err, "rank %d", r)
		assert.Empty(t, str)
		require.NoError(t, tm.Destroy())
	}
}
