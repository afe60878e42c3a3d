package launch

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
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

// A job that died left its rendezvous file behind, and a later job got
// the same id (Open MPI's job ids repeat). Its rank 1 reads the stale
// file before the new rank 0 has replaced it, and meets what is at the
// dead job's address now: nothing that answers (the port closed),
// another job's coordinator, which refuses the token, or something that
// takes the hello and keeps quiet. Either way it must read the file again
// and join the new rank 0 once that has published.
func TestRendezvousStaleFileOfSameJobID(t *testing.T) {
	const jobID = "7"
	opt := Options{HeartbeatInterval: 50 * time.Millisecond, JoinTimeout: 30 * time.Second}
	for _, stale := range []string{"hung up", "another job", "quiet"} {
		path := filepath.Join(t.TempDir(), "rdv", jobID+".coord")
		var staleAddr string
		var other *Coordinator
		var hungUp net.Listener
		switch stale {
		case "hung up", "quiet":
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			hungUp, staleAddr = ln, ln.Addr().String()
		case "another job":
			var err error
			other, err = NewCoordinator("127.0.0.1:0", strings.Repeat("9", 32), 2, opt)
			require.NoError(t, err)
			go func() { _ = other.Serve(context.Background()) }()
			defer other.ln.Close()
			staleAddr = other.Addr()
		}
		require.NoError(t, publish(path, jobID, staleAddr, strings.Repeat("1", 32)))

		roles := []Role{
			{Rank: 0, Size: 2, Launcher: "mpirun", CoordFile: path, JobID: jobID},
			{Rank: 1, Size: 2, LocalRank: 1, Launcher: "mpirun", CoordFile: path, JobID: jobID},
		}
		sess := make([]*Session, 2)
		errs := make([]chan error, 2)
		start := func(r int) {
			errs[r] = make(chan error, 1)
			go func() {
				var err error
				sess[r], err = Start(context.Background(), roles[r], Peer{Host: fmt.Sprintf("h%d", r)}, opt)
				errs[r] <- err
			}()
		}
		start(1)
		// Rank 1 has read the stale file once it has been at its address.
		switch stale {
		case "hung up":
			conn, err := hungUp.Accept()
			require.NoError(t, err, stale)
			hungUp.Close()
			conn.Close()
		case "quiet":
			conn, err := hungUp.Accept()
			require.NoError(t, err, stale)
			defer conn.Close()
		case "another job":
			require.Eventually(t, func() bool { return len(other.Rejected()) > 0 }, 20*time.Second, 5*time.Millisecond, stale)
		}
		start(0)
		for _, r := range []int{1, 0} { // rank 1's failure is the quick one
			require.NoError(t, <-errs[r], "%s: rank %d", stale, r)
		}
		for r := range sess {
			peers := sess[r].Peers()
			require.Len(t, peers, 2, stale)
			assert.Equal(t, "h0", peers[0].Host, "%s: rank %d", stale, r)
			assert.Equal(t, "h1", peers[1].Host, "%s: rank %d", stale, r)
		}
		closed := make(chan error, 2)
		for r := range sess {
			go func() { closed <- sess[r].Close() }()
		}
		require.NoError(t, <-closed, stale)
		require.NoError(t, <-closed, stale)
	}
}

// Rank 0 removes its rendezvous file once every rank has joined: a rank
// that the job's failure ends (os.Exit) never reaches Close, and a file
// it left would be read by a later job given the same id.
func TestRendezvousFileGoneOnceJoined(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rdv", "8.coord")
	opt := Options{HeartbeatInterval: 50 * time.Millisecond, JoinTimeout: 30 * time.Second}
	sess := make([]*Session, 2)
	errs := make(chan error, 2)
	for r := range sess {
		go func() {
			var err error
			sess[r], err = Start(context.Background(), Role{Rank: r, Size: 2, LocalRank: r, Launcher: "mpirun", CoordFile: path, JobID: "8"}, Peer{Host: "h"}, opt)
			errs <- err
		}()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	_, err := os.Stat(path)
	assert.True(t, os.IsNotExist(err), "the rendezvous file outlived the join: %v", err)
	closed := make(chan error, 2)
	for r := range sess {
		go func() { closed <- sess[r].Close() }()
	}
	require.NoError(t, <-closed)
	require.NoError(t, <-closed)
}
