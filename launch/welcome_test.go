package launch

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every hello fits in a frame but the welcome, which carries them all,
// does not: the ranks must hear why at once, not wait out the join
// timeout for a welcome that was never sent and then blame a timeout.
func TestWelcomeOverFrameLimitFailsTheJob(t *testing.T) {
	token := strings.Repeat("w", 32)
	opt := Options{JoinTimeout: 20 * time.Second}
	const n = 4
	c, err := NewCoordinator("127.0.0.1:0", token, n, opt)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- c.Serve(context.Background()) }()
	payload := bytes.Repeat([]byte{0xa5}, MaxFrameBytes/3) // 4/3 as JSON: one fits, four do not
	errs := make(chan error, n)
	for r := 0; r < n; r++ {
		go func(r int) {
			cl, err := Join(context.Background(), JoinConfig{Addr: c.Addr(), Token: token, Rank: r, Size: n, Host: "h", Payload: payload, Options: opt})
			if err == nil {
				cl.abandon()
			}
			errs <- err
		}(r)
	}
	for r := 0; r < n; r++ {
		err := <-errs
		require.Error(t, err)
		assert.Contains(t, err.Error(), "frame limit", "rank's error names the cause")
	}
	err = <-served
	require.Error(t, err)
	assert.Contains(t, err.Error(), "frame limit")
}
