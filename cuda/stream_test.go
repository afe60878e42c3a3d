package cuda

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// envForeignChild makes TestForeignStreamRefusesSpecialHandles run its
// calls in a child process: a refusal that came too late would reach the
// driver (absent on a machine without a GPU) and crash the test binary.
const envForeignChild = "GORING_CUDA_FOREIGN_CHILD"

// The driver's special stream handles are not streams a caller owns:
// CU_STREAM_LEGACY (1) is the legacy default stream, refused like 0, and
// CU_STREAM_PER_THREAD (2) names the per-thread default stream of
// whichever OS thread makes the call, a different stream each time a
// goroutine moves. Both must be refused before any driver call.
func TestForeignStreamRefusesSpecialHandles(t *testing.T) {
	if os.Getenv(envForeignChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestForeignStreamRefusesSpecialHandles$", "-test.count=1")
		cmd.Env = append(os.Environ(), envForeignChild+"=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child:\n%s", out)
		return
	}
	d := &Device{ordinal: 0} // never opened: no driver call may be made
	for _, h := range []uintptr{0, 1, 2} {
		s, err := d.ForeignStream(h)
		require.Error(t, err, "handle %d", h)
		require.Nil(t, s)
	}
}
