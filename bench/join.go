package bench

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/team"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// A rank of goring's own jobs (goring bench, goring calibrate) joins its
// job in one of three ways, each a file: through the team layer
// (join_team.go, as UCC's team creation does), over lanes of UCX workers
// of its own (join_lanes.go), or over the namespace testbed's rails
// (join_rails.go). All three give a RankJob.

// FailureGrace is how long a rank whose collective failed waits for the
// coordinator to report a failed peer before it reports its own error
// (RankJob.WaitVerdict).
const FailureGrace = 2 * time.Second

// Join is where a rank stands in its job and what it does when the job
// fails.
type Join struct {
	Role        launch.Role
	Node, Local int // the rank's emulated node and its index there
	// OnFailure is called, from a goroutine of the job's own, when
	// another rank died or stalled or the coordinator went away, whatever
	// this rank is doing; it should end the process (the CLI prints the
	// cause and exits).
	OnFailure func(error)
}

// RankJob is one rank's connection to its job: the coordinator (a
// launch.Session: control plane, failure notices) and a data plane to
// every peer.
type RankJob struct {
	Sess  *launch.Session
	Tr    *ucxmp.Transport   // lane 0's (the team's, through the team layer); nil on the testbed (Data are ucxmp.Rails)
	Teams map[int]*team.Team // the rank's team per lane count (join_team.go); nil: bench's own transports
	Data  []Transport        // every lane's data plane, lane 0's first

	stopWatch func()
	closers   []func()
}

// joined is rj once its join returned err: nil, what the join opened
// closed, on an error.
func joined(rj *RankJob, err error) (*RankJob, error) {
	if err != nil {
		rj.Close()
		return nil, err
	}
	return rj, nil
}

// ucxConfig is a rank's UCX settings for its own workers: the transports
// tls where UCX_TLS does not set them, with UCX's cuda transports
// (cuda_copy and cuda_ipc, the "cuda" alias) for device buffers, so that
// those of ranks on one node move GPU to GPU.
func ucxConfig(tls string, gpuMem bool) map[string]string {
	cfg := map[string]string{}
	if os.Getenv("UCX_TLS") == "" {
		cfg["TLS"] = tls
		if gpuMem {
			cfg["TLS"] += ",cuda"
		}
	}
	return cfg
}

// start joins the coordinator with payload (the data plane's addresses or
// the teams' cards) and starts the failure watch.
func (rj *RankJob) start(ctx context.Context, j Join, payload []byte) error {
	host, _ := os.Hostname()
	sess, err := launch.Start(ctx, j.Role, launch.Peer{Host: host, Node: j.Node, Local: j.Local, Payload: payload}, launch.Options{})
	if err != nil {
		return err
	}
	rj.Sess = sess
	rj.watch(j.OnFailure)
	return nil
}

// watch hands a job failure (another rank died or stalled, or the
// coordinator went away) to onFailure, whatever this rank is doing.
func (rj *RankJob) watch(onFailure func(error)) {
	done := make(chan struct{})
	var stopOnce sync.Once
	rj.stopWatch = func() { stopOnce.Do(func() { close(done) }) }
	go func() {
		select {
		case <-rj.Sess.Failed():
			onFailure(rj.Sess.Err())
		case <-done:
		}
	}()
}

// WaitVerdict is called when this rank's own work failed. A transport
// error (UCX's I/O error on a receive, say) is often the symptom of a peer
// that died; the coordinator learns of a death at once, so wait a moment
// for its verdict: the watcher then reports the cause ("rank N failed") and
// ends the process; otherwise the error is this rank's own.
func (rj *RankJob) WaitVerdict() {
	select {
	case <-rj.Sess.Failed():
		time.Sleep(FailureGrace) // the watcher reports the job failure meanwhile
	case <-time.After(FailureGrace):
	}
}

// Finish stops the watcher and leaves the job cleanly (after the last
// barrier: a rank that leaves now is not a failure).
func (rj *RankJob) Finish() error {
	rj.stopWatch()
	return rj.Sess.Close()
}

// Close releases the data plane, workers and contexts, newest first, and
// stops the watcher; safe after Finish and on a partly built RankJob.
func (rj *RankJob) Close() {
	if rj.stopWatch != nil {
		rj.stopWatch()
	}
	for i := len(rj.closers) - 1; i >= 0; i-- {
		rj.closers[i]()
	}
	rj.closers = nil
}

// OnClose adds a closer that Close runs before those already there.
func (rj *RankJob) OnClose(f func()) { rj.closers = append(rj.closers, f) }

// SetWait applies a waiting rank's spin and yield (goring bench's
// --spin-polls and --yield) to a lane's data plane.
func SetWait(t Transport, spin int, yield time.Duration) {
	switch t := t.(type) {
	case *ucxmp.Transport:
		t.SpinPolls, t.Yield = spin, yield
	case *ucxmp.Rails:
		t.SpinPolls, t.Yield = spin, yield
	}
}
