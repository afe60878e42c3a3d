package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The fold of Thakur, Rabenseifner and Gropp 2005 section 4.4: every rank
// either folds into r+1 or gets a distinct new rank in 0..P'-1, and
// realRank inverts newRank.
func TestPow2Fold(t *testing.T) {
	for n := 1; n <= 40; n++ {
		f := newPow2Fold(n)
		assert.True(t, isPow2(f.p2) && f.p2 <= n && 2*f.p2 > n, "case %d: p2 %d", n, f.p2)
		seen := map[int]bool{}
		folded := 0
		for r := 0; r < n; r++ {
			nr := f.newRank(r)
			if f.folded(r) {
				folded++
				assert.Equal(t, -1, nr, "case %d rank %d", n, r)
				assert.True(t, f.standsIn(r+1), "case %d: rank %d folds into %d", n, r, r+1)
				continue
			}
			assert.True(t, nr >= 0 && nr < f.p2 && !seen[nr], "case %d: rank %d new rank %d", n, r, nr)
			seen[nr] = true
			assert.Equal(t, r, f.realRank(nr), "case %d", n)
		}
		assert.Equal(t, n-f.p2, folded, "case %d", n)
	}
}
