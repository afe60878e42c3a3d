package launch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rendezvous file names the job it is for; a rank finds the address
// and token rank 0 published there, also where mpirun gave no job id and
// GORING_COORD_FILE names the file (FromEnv accepts that), and refuses a
// file of another job.
func TestRendezvousRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rdv")
	for _, job := range []string{"1234", ""} {
		path := filepath.Join(dir, "job"+job+".coord")
		require.NoError(t, publish(path, job, "127.0.0.1:4242", "tok-"+job))
		addr, token, err := waitRendezvous(context.Background(), Role{Rank: 1, JobID: job, CoordFile: path}, time.Second)
		require.NoError(t, err, "job id %q", job)
		assert.Equal(t, "127.0.0.1:4242", addr, "job id %q", job)
		assert.Equal(t, "tok-"+job, token, "job id %q", job)
	}
	path := filepath.Join(dir, "other.coord")
	require.NoError(t, publish(path, "1234", "127.0.0.1:4242", "tok"))
	_, _, err := waitRendezvous(context.Background(), Role{Rank: 1, JobID: "", CoordFile: path}, 100*time.Millisecond)
	assert.ErrorContains(t, err, "stale")
}
