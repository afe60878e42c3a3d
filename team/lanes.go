package team

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/tune"

	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// Lanes (Multi-lane, §3; option lanes=W, UCC_TL_GORING_LANES): a team
// rank runs W UCX workers. Lane 0 is the team's own worker (rw, tr); lanes
// 1..W-1 each open a UCX context and worker of their own through
// launch.OpenLane, with the context's UCX settings (launch.LaneConfig,
// where a lane's rail binding goes). The card carries every lane's address
// (launch.EncodeLaneAddresses; one lane: the bare address, the card of
// before lanes); lane w connects to lane w of every peer. A collective on
// host buffers is split by coll.LaneSplit and each part runs on its lane,
// one goroutine per lane (exec.RunLanesWatched), started when the call
// goes on the wire and joined before it completes, fails or is withdrawn;
// the lanes' workers close with the team. Device buffers run on lane 0.

// teamLane is one of lanes 1..W-1 of a team rank.
type teamLane struct {
	lane *launch.Lane
	tr   *ucxmp.Transport     // nil until connect
	eps  *ucxmp.EndpointCache // endpoints kept from the lane's last team (workerpool.go); nil: none
}

// openTeamLanes opens lanes 1..W-1 of a rank of a team of size with the
// context's UCX settings: W is the option's, or with lanes=auto the
// host's cores shared among its ranks, as many as the team's calls take
// (autoLanes).
func openTeamLanes(ctx *Context, size int) ([]*teamLane, error) {
	var lanes []*teamLane
	for w := 1; w < laneCount(ctx, size); w++ {
		l, err := launch.OpenLane(launch.LaneConfig(ctx.ucxConfig, w))
		if err != nil {
			closeTeamLanes(lanes)
			return nil, err
		}
		lanes = append(lanes, &teamLane{lane: l})
	}
	return lanes, nil
}

// laneCount is the lanes a team of size opens, lane 0 included.
func laneCount(ctx *Context, size int) int {
	if n := ctx.opts.lanes; n != 0 {
		return n
	}
	return autoLanes(size)
}

// laneCount is the lanes t opens, lane 0 included.
func (t *Team) laneCount() int { return laneCount(t.ctx, t.size) }

// closeTeamLanes closes each lane's transport and kept endpoints, then
// its worker and context.
func closeTeamLanes(lanes []*teamLane) error {
	var errs []error
	for i := len(lanes) - 1; i >= 0; i-- {
		l := lanes[i]
		if l.tr != nil {
			errs = append(errs, l.tr.Close())
			l.tr = nil
		}
		errs = append(errs, l.eps.Close())
		l.lane.Close()
	}
	return errors.Join(errs...)
}

// releaseLaneTransports ends each lane's transport, keeping its worker
// and its endpoints for the lane's next team.
func releaseLaneTransports(lanes []*teamLane) error {
	var errs []error
	for i := len(lanes) - 1; i >= 0; i-- {
		l := lanes[i]
		if l.tr != nil {
			if l.eps == nil {
				l.eps = &ucxmp.EndpointCache{}
			}
			errs = append(errs, l.tr.Release(l.eps))
			l.tr = nil
		}
	}
	return errors.Join(errs...)
}

// laneAddress is the card's address field: every lane's worker address.
func laneAddress(rw *launch.RankWorker, lanes []*teamLane) []byte {
	addrs := [][]byte{rw.Address}
	for _, l := range lanes {
		addrs = append(addrs, l.lane.Address)
	}
	return launch.EncodeLaneAddresses(addrs)
}

// connectLanes connects lanes 1..W-1 to the same lanes of every peer;
// addrs[r] is rank r's card address (every lane's).
func (t *Team) connectLanes(addrs [][]byte, peerErrorsTo func(int) bool) error {
	if len(t.lanes) == 0 {
		return nil
	}
	byLane := make([][][]byte, len(t.lanes)+1)
	for r, a := range addrs {
		la, err := launch.DecodeLaneAddresses(a, len(t.lanes)+1)
		if err != nil {
			return Invalid("card of rank %d: %v (UCC_TL_GORING_LANES must be the same on every rank)", r, err)
		}
		for w := range la {
			byLane[w] = append(byLane[w], la[w])
		}
	}
	for i, l := range t.lanes {
		tr, _, err := l.lane.ConnectReusing(t.rank, byLane[i+1], peerErrorsTo, l.eps)
		if err != nil {
			return resourceErr{err}
		}
		l.tr = tr
	}
	return nil
}

// checkLaneCounts refuses cards of another lane count than t's, on every
// rank alike: a rank of one lane takes a peer's address as one worker's,
// and without the count it would hand UCX the packed addresses of
// several.
func (t *Team) checkLaneCounts(all []card) error {
	w := len(t.lanes) + 1
	for r, c := range all {
		if n := max(c.lanes, 1); n != w {
			return Invalid("card of rank %d: %d lanes, this rank runs %d (UCC_TL_GORING_LANES must be the same on every rank)", r, n, w)
		}
	}
	return nil
}

// laneZeroAddresses are lane 0's addresses of the cards' address fields.
func (t *Team) laneZeroAddresses(addrs [][]byte) ([][]byte, error) {
	if len(t.lanes) == 0 {
		return addrs, nil
	}
	out := make([][]byte, len(addrs))
	for r, a := range addrs {
		la, err := launch.DecodeLaneAddresses(a, len(t.lanes)+1)
		if err != nil {
			return nil, Invalid("card of rank %d: %v (UCC_TL_GORING_LANES must be the same on every rank)", r, err)
		}
		out[r] = la[0]
	}
	return out, nil
}

// autoLanes is lanes=auto's count for this process in a team of size:
// the CPUs it may run on (Go reads the affinity mask) shared among its
// host's ranks, as the launcher tells them (tune.AutoLanes; one where no
// launcher says).
func autoLanes(size int) int {
	return tune.AutoLanes(size, runtime.NumCPU(), localRanks())
}

// localRanks is the number of ranks on this host as the launcher tells
// them (0 where no launcher says).
func localRanks() int {
	for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// callLanes is how many lanes a host call of B bytes per rank runs on:
// every lane where the user named the count, else as many as pay for the
// call's collective, size and team (tune.CallLanes; one for most calls).
func (t *Team) callLanes(a Args, B int64) int {
	w := len(t.lanes) + 1
	if t.ctx.opts.lanes != 0 {
		return w
	}
	return tune.CallLanes(a.Coll, t.size, w, B)
}

// lanesRunner is a host call on several of the team's lanes: a Machine
// per lane, run by one goroutine per lane while the call is on the wire.
type lanesRunner struct {
	c    *Coll
	ms   []*exec.Machine // per lane; nil: an empty lane
	stop context.CancelFunc
	done chan struct{} // nil until the lanes run: C calls of the team were live (waitForC)
	err  error
	// since: when the call began waiting for the C calls (the watch's clock).
	since time.Time
}

// newLanesRunner plans the whole call (its plan gives the buffers), then
// each lane's part.
func newLanesRunner(k *Call) (Runner, error) {
	c := k.coll
	_, bufs, err := c.planned(k)
	if err != nil {
		return nil, err
	}
	return c.planLanes(k.Args, c.alg, k.bytes, bufs, c.team.callLanes(k.Args, k.bytes))
}

// planLanes builds c's machines on w of the team's lanes for host buffers
// bufs of a call of B bytes per rank (UCC's meaning); every lane's part
// must be served by alg. The lanes a call leaves out stay empty. Scratch
// memory is the call's own (freed at finalize).
func (c *Coll) planLanes(a Args, alg string, B int64, bufs exec.Buffers, w int) (*lanesRunner, error) {
	t := c.team
	esize := a.Dtype.Size()
	dtype, op := a.Coll.Reduction(a.Dtype, a.Op)
	r := &lanesRunner{c: c, ms: make([]*exec.Machine, len(t.lanes)+1)}
	for i, p := range coll.LaneSplit(a.Coll, B, esize, t.size, w) {
		if p.Len == 0 {
			continue
		}
		entry, err := t.plans.get(sched.Spec{Collective: a.Coll, Algorithm: alg, Topo: t.topo, Bytes: p.Len, DtypeBytes: esize, Root: a.Root, Chunks: a.Chunks}, t.rank, a.Dtype, a.Op, exec.Host)
		if err != nil {
			if sched.IsUnsupported(err) {
				return nil, NotSupported("%s/%s lane %d of %d (%d bytes): %v", a.Coll, alg, i, w, p.Len, err)
			}
			return nil, invalidErr{err}
		}
		prog, err := sched.LaneProgram(entry.plan, t.rank, p, B)
		if err != nil {
			return nil, invalidErr{err}
		}
		lb := bufs
		if z := prog.Sizes.Scratch; z > 0 {
			lb.Scratch = exec.HostRegion(c.alloc(z))
		}
		if r.ms[i], err = exec.New(prog, lb, exec.ConfigFor(entry.plan, dtype, op)); err != nil {
			return nil, invalidErr{err}
		}
	}
	return r, nil
}

// Begin puts the call on the wire on every lane. The lanes run on a
// goroutine of their own, which drives lane 0's worker, the team's: one
// the C path's calls also drive, from the caller's thread under the C
// lock. A UCX worker serves one thread at a time, so while C calls of
// the team are live (begun before this call; no new one begins while Go
// has a call on the wire, SetGoBusy) the lanes wait, and Progress drives
// those C calls, under the lock its caller holds, until none is.
func (r *lanesRunner) Begin() error {
	if err := r.c.copyInput(); err != nil {
		return err
	}
	t := r.c.team
	t.tr.NextCall()
	for _, l := range t.lanes {
		l.tr.NextCall()
	}
	r.done, r.err = nil, nil
	if t.cpath != nil && t.cpath.ProgressLive() {
		r.since = time.Now()
		return nil
	}
	r.start()
	return nil
}

// start runs the lanes on a goroutine.
func (r *lanesRunner) start() {
	t := r.c.team
	ts := []exec.Transport{t.tr}
	for _, l := range t.lanes {
		ts = append(ts, l.tr)
	}
	ctx, stop := context.WithCancel(context.Background())
	r.stop, r.done = stop, make(chan struct{})
	go func() {
		defer close(r.done)
		r.err = exec.RunLanesWatched(ctx, r.ms, ts, t.deadline(), t.watch)
	}()
}

// waitForC drives the team's live C calls once (the caller holds the C
// lock, as every Go entry point that reaches a runner does) and starts
// the lanes when none is left. While it waits, the team's watch applies
// as on the lanes (a team with a C side has no deadline: cpathWanted).
func (r *lanesRunner) waitForC() error {
	t := r.c.team
	if t.cpath != nil && t.cpath.ProgressLive() {
		if t.watch != nil && time.Since(r.since) >= t.watch.Every() {
			r.since = time.Now()
			return t.watch.Check()
		}
		return nil
	}
	r.start()
	return nil
}

// Progress reports whether the lanes have finished, without blocking.
func (r *lanesRunner) Progress() (bool, error) {
	if r.done == nil {
		return false, r.waitForC()
	}
	select {
	case <-r.done:
	default:
		return false, nil
	}
	r.stop()
	if r.err != nil {
		return false, r.err
	}
	return true, nil
}

// Abort stops the lanes and waits for them: no lane outlives the call.
func (r *lanesRunner) Abort(cause error) error {
	if r.done == nil { // never started: nothing runs
		return cause
	}
	r.stop()
	<-r.done
	if r.err != nil {
		return errors.Join(cause, r.err)
	}
	return cause
}
