package exec_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/exec"
)

// TimeoutRule must say what TimeoutFor does: 10 s, and 1 s more per whole
// 50 MB.
func TestTimeoutRuleSaysTimeoutFor(t *testing.T) {
	assert.Equal(t, "10s + 1s per 50 MB", exec.TimeoutRule)
	assert.Equal(t, 10*time.Second, exec.TimeoutFor(0))
	assert.Equal(t, 10*time.Second, exec.TimeoutFor(49_999_999))
	assert.Equal(t, 11*time.Second, exec.TimeoutFor(50_000_000))
	assert.Equal(t, 30*time.Second, exec.TimeoutFor(1_000_000_000))
}
