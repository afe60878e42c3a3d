package team

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/ucx"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// Team is one rank's share of a team: its own UCX worker (teams never
// share a tag space), the transport to every peer once connected, the
// topology its plans are made for, and the queue of collectives.
type Team struct {
	mu         sync.Mutex
	ctx        *Context
	rank, size int
	rw         *launch.RankWorker
	card       []byte
	tr         *ucxmp.Transport // nil until connect
	topo       *topo.Topology
	// setTopo is the topology the caller set (SetTopology) in place of the
	// one the members' hosts make; nil: none.
	setTopo   *topo.Topology
	queue     []*Coll // posted, waiting for cur to finish
	cur       *Coll   // the collective on the wire
	held      int     // of heldCalls, this team's (held.go)
	plans     planCache
	watch     exec.Watch // this host's peers, checked while a call waits
	memTypes  ucx.MemoryTypes
	gpus      map[int]*teamGPU // by device ordinal, opened on first use
	engine    *cudaexec.Engine // CUDA push engine for peers on this host; nil: none
	oneHost   bool             // every rank runs on this host
	sharedGPU bool             // every rank's process sees one GPU, the same one
	stager    *cudaexec.Stager // host staging where UCX moves no CUDA memory; nil: none yet
	// otherNode says whether a peer is on another node (set at connect);
	// their device messages may be staged (stage.go).
	otherNode func(peer int) bool
	// gpuCount is cuda.DeviceCount, asked once (deviceCount).
	gpuCountOnce sync.Once
	gpuCount     int
	// cardGPUs is how many GPUs the members' cards name where every card
	// names one (each process sees one GPU: 1 is sharedGPU, the team
	// size a GPU each, as with CUDA_VISIBLE_DEVICES per rank); 0 where
	// some process sees several or none (hostGPUs).
	cardGPUs int
	lanes    []*teamLane // lanes 1..W-1 (lanes.go); lane 0 is rw and tr
	// noSplit says why the engine does not split this team's transfers
	// although the context has a calibration ("" otherwise).
	noSplit string
	handle  uint64      // the team's handle in goring.h's API
	cpath   *cexec.Team // the C path's side of the team (cpath.go); nil: none
	// cross is the team's state for calls by reading the peers' memory
	// (crossmem.go; nil: none); crossOff says the ranks cannot;
	// crossDecide is the threads every rank decides auto's calls by (the
	// fewest any rank has).
	cross       *direct.Host
	crossOff    bool
	crossDecide int
	// leaderStats sums the phases of the team's calls by the leader on a
	// shared GPU (onedevice.go; printed by reportDirect).
	leaderStats direct.Stats
	// directFree are finished calls of package direct's engine, kept for
	// the next (direct.go).
	directFree []*direct.Call
	// link is a lazy team's card exchange (lazy.go); nil for a team whose
	// cards came at creation (goring_team_connect).
	link *teamLink
	// eps are the endpoints a reused worker kept from its last team
	// (workerpool.go); nil: none.
	eps *ucxmp.EndpointCache
	// layers are the UCC context's team layers (goring_team_layers), for
	// the claims by measurement (scores.go).
	layers []string
	// enginePeers are the ranks the push engine pushes to (set at
	// connect; Team.gpu prepares its streams for them).
	enginePeers []int
	// node is the team's node path (node.go); nil until its first call
	// that could take it.
	node *nodeState
	// cutShort says a call failed or was withdrawn: messages sent to the
	// team's workers may be left unreceived (workerpool.go).
	cutShort bool
	// kernelsOn are the GPUs whose kernels loadKernelsOn has loaded for
	// the team, by ordinal: true where the node family is among them
	// (gpu.go). Under t.mu.
	kernelsOn map[int]bool
	// choices are goring's choices the team has made (choiceMemo, gpu.go).
	choices choiceMemo
	// cLocks counts lockC's takes of the C lock (tests). Under t.mu.
	cLocks int
}

// NewTeam is rank's share of a team of size whose members exchange their
// cards (Card) through the caller and connect with Connect.
func NewTeam(ctx *Context, rank, size int) (*Team, error) {
	if size < 1 || rank < 0 || rank >= size {
		return nil, Invalid("rank %d of a team of %d", rank, size)
	}
	if size-1 > ucx.MaxTagSender {
		return nil, NotSupported("a team of %d ranks exceeds the %d senders goring's tags can name", size, ucx.MaxTagSender+1)
	}
	rw, err := launch.OpenRankWorker(ctx.uctx)
	if err != nil {
		return nil, resourceErr{err}
	}
	lanes, err := openTeamLanes(ctx, size)
	if err != nil {
		_ = rw.Close()
		return nil, resourceErr{err}
	}
	host := nodeName()
	pid := os.Getpid()
	start, err := launch.ProcStart(pid)
	if err != nil {
		// Without /proc no peer on this host can watch us: say so in the
		// card with pid 0, which peers take as "cannot be watched".
		pid, start = 0, 0
	}
	c := card{host: host, pid: pid, start: start, addr: laneAddress(rw, lanes), gpu: soleGPU(ctx), cross: crossSetting(ctx), lanes: len(lanes) + 1}
	return &Team{ctx: ctx, rank: rank, size: size, rw: rw, card: encodeCard(c), lanes: lanes}, nil
}

// Connect decodes the gathered cards (size slots of slot bytes), connects
// to every peer and places the ranks on nodes.
func (t *Team) Connect(cards []byte, slot int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.link != nil {
		return Invalid("a lazy team connects by itself")
	}
	return t.connectLocked(cards, slot)
}

// connectLocked is connect with t.mu held.
func (t *Team) connectLocked(cards []byte, slot int) error {
	if t.tr != nil {
		return Invalid("team already connected")
	}
	if slot <= 0 || len(cards) != t.size*slot {
		return Invalid("%d bytes of cards for %d ranks of %d-byte slots", len(cards), t.size, slot)
	}
	addrs := make([][]byte, t.size)
	hosts := make([]string, t.size)
	all := make([]card, t.size)
	for r := range addrs {
		c, err := decodeCard(cards[r*slot : (r+1)*slot])
		if err != nil {
			return Invalid("card of rank %d: %v", r, err)
		}
		addrs[r], hosts[r], all[r] = c.addr, c.host, c
	}
	tp := t.setTopo
	if tp == nil {
		var err error
		if tp, err = teamTopology(hosts); err != nil {
			return err
		}
	}
	sayPlacement(t.rank, hosts, tp)
	// How a failed peer is noticed without a deadline: a peer on this host
	// by its process (newPeerWatch); a peer elsewhere by UCX, whose
	// endpoints to other hosts run in peer-error mode (a closed connection
	// fails the endpoint). Shared-memory endpoints stay in the default
	// mode, which keeps UCX's fast intra-node transports.
	self := hosts[t.rank]
	peerErrorsTo := func(peer int) bool { return hosts[peer] != self }
	if err := t.checkLaneCounts(all); err != nil {
		return err
	}
	lane0, err := t.laneZeroAddresses(addrs)
	if err != nil {
		return err
	}
	tr, mts, err := t.rw.ConnectReusing(t.rank, lane0, peerErrorsTo, t.eps)
	if err != nil {
		return resourceErr{err}
	}
	if err := t.connectLanes(addrs, peerErrorsTo); err != nil {
		_ = tr.Close()
		return err
	}
	t.tr, t.topo, t.memTypes = tr, tp, mts
	t.otherNode = peerErrorsTo
	t.placeFrom(all)
	// The push engine serves CUDA buffers of peers on this host. Whether
	// a rank has one must be the same on both ends of a pair: it depends
	// on the ipc option (the same for every rank) and on the CUDA driver
	// loading, which is the same on one host (engineWanted). A lazy team
	// made it when it opened.
	if t.engine == nil && t.engineWanted() {
		t.engine = newPushEngine()
	}
	if t.engine != nil {
		tr.UseEngine(t.engine, func(peer int) bool { return hosts[peer] == self })
		t.usePlanner(hosts)
		for r, h := range hosts {
			if h == self && r != t.rank {
				t.enginePeers = append(t.enginePeers, r)
			}
		}
	}
	t.openCrossmem(all)
	return t.openCPath()
}

// soleGPU is the PCI address of the one GPU this process sees, "" when it
// sees none or several (then which one a rank uses is not known before
// its calls) or when the push engine is off (the leader algorithms need
// it). Ranks whose cards give the same address share that GPU.
func soleGPU(ctx *Context) string {
	if ctx.opts.noIPC {
		return ""
	}
	if n, err := cuda.DeviceCount(); err != nil || n != 1 {
		return ""
	}
	id, err := cuda.DevicePCIBusID(0)
	if err != nil {
		return ""
	}
	return id
}

// teamTopology places ranks on nodes by host: when every host holds the
// same number of ranks and each host's ranks are contiguous (the usual
// --map-by core placement), node n holds ranks n*G..n*G+G-1 as the
// hierarchical algorithms expect; otherwise the team is one flat node and
// only the flat algorithms see structure. Link figures are the synthetic
// preset's (topo.Synthetic): plans depend only on the shape.
func teamTopology(hosts []string) (*topo.Topology, error) {
	var order []string
	count := map[string]int{}
	contiguous := true
	for r, h := range hosts {
		if count[h] == 0 {
			order = append(order, h)
		} else if hosts[r-1] != h {
			contiguous = false
		}
		count[h]++
	}
	nodes, per := len(order), count[order[0]]
	for _, h := range order {
		if count[h] != per {
			contiguous = false
		}
	}
	if !contiguous {
		nodes, per = 1, len(hosts)
	}
	return shapeTopology(nodes, per)
}

// shapeTopologies keeps one topology per team shape: a process makes many
// teams of few shapes, and plans only read them.
var shapeTopologies struct {
	sync.Mutex
	m map[[2]int]*topo.Topology
}

func shapeTopology(nodes, per int) (*topo.Topology, error) {
	shapeTopologies.Lock()
	defer shapeTopologies.Unlock()
	if tp := shapeTopologies.m[[2]int{nodes, per}]; tp != nil {
		return tp, nil
	}
	tp, err := topo.Synthetic(fmt.Sprintf("ucc-%dx%d", nodes, per), nodes, per, 1)
	if err != nil {
		return nil, fmt.Errorf("team topology: %w", err)
	}
	if shapeTopologies.m == nil {
		shapeTopologies.m = map[[2]int]*topo.Topology{}
	}
	shapeTopologies.m[[2]int{nodes, per}] = tp
	return tp, nil
}

// SetTopology makes tp the topology the team's plans are made for, in
// place of the one its members' hosts make (teamTopology): goring bench
// emulates nodes on one host (--nodes, --topo) and measures the plans of
// that shape. Before Connect; tp places every rank of the team.
func (t *Team) SetTopology(tp *topo.Topology) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.tr != nil || t.link != nil:
		return Invalid("the topology is set before an eager team connects")
	case tp == nil || tp.NumGPUs() != t.size:
		return Invalid("a topology for a team of %d ranks must place %d ranks", t.size, t.size)
	}
	t.setTopo = tp
	return nil
}

// Transport is the team's transport to every peer (lane 0's), nil before
// it connects, for messages of the caller's own between the team's
// calls: goring bench's barrier between iterations. Such messages start
// a call of their own on it (NextCall), as every call of the team does,
// and never while a call of the team is in flight.
func (t *Team) Transport() *ucxmp.Transport {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tr
}

// SetHandle records the team's handle in the C API, under which its C
// side is listed (CPathTable); set before Connect.
func (t *Team) SetHandle(h uint64) { t.handle = h }

// Size is the number of ranks of the team.
func (t *Team) Size() int { return t.size }

// Card is the card this rank gives the caller to gather for Connect; a
// lazy team exchanges its cards by itself and has none to give.
func (t *Team) Card() ([]byte, error) {
	if t.link != nil {
		return nil, Invalid("a lazy team exchanges its card by itself")
	}
	return t.card, nil
}

// SetLayers records the UCC context's team layers, for the claims by
// measurement (scores.go).
func (t *Team) SetLayers(names []string) {
	t.mu.Lock()
	t.layers = names
	t.mu.Unlock()
}

// progress drives the team's collectives without blocking: it starts the
// next queued one when none is on the wire and polls the current one,
// moving on as long as collectives complete. Caller holds t.mu.
func (t *Team) progress() {
	if t.tr == nil && (t.link == nil || !t.progressLink()) {
		return // a lazy team still gathering its cards, or failed to
	}
	for {
		if t.cur == nil {
			if len(t.queue) == 0 {
				return
			}
			t.cur, t.queue = t.queue[0], t.queue[1:]
			if t.cur.pending != nil && !t.cur.finishInit() {
				// Failed (its error kept) or nothing to move. A failed one
				// cut the team short: peers that built theirs have it on
				// the wire and send this rank what nothing will receive.
				t.cutShort = t.cutShort || t.cur.state == collFailed
				t.cur = nil
				continue
			}
			// The context for UCX on CUDA memory; a node kernel's launch
			// sets it itself, and its polls need none (nodepoll.go).
			if !t.cur.startsKernelOnly() {
				t.cur.current()
			}
			t.cur.start()
		} else if !t.cur.inKernel() {
			t.cur.current()
		}
		if !t.cur.poll() {
			return
		}
		if t.cur.state == collFailed {
			t.cutShort = true
		}
		t.cur = nil
	}
}

// Destroy cancels what is in flight and releases the transport and worker.
func (t *Team) Destroy() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closeCPath()
	t.reportDirect()
	if t.link != nil && t.tr == nil && t.link.started {
		t.link.cancel(t.ctx.rv)
	}
	var errs []error
	clean := !t.cutShort && t.cur == nil && len(t.queue) == 0 && t.tr != nil
	if t.cur != nil {
		t.cur.abort(errors.New("team destroyed"))
		t.cur = nil
	}
	for _, c := range t.queue {
		c.abort(errors.New("team destroyed before the collective started"))
	}
	t.queue = nil
	errs = append(errs, t.closeNode())
	if t.tr != nil && t.tr.BusyStaged() > 0 && os.Getenv("GORING_NODE_STATS") != "" {
		fmt.Fprintf(os.Stderr, "goring push: rank %d of %d, %d transfers staged through host memory while a mapping was busy\n", t.rank, t.size, t.tr.BusyStaged())
	}
	t.plans.clear()
	if t.engine != nil {
		errs = append(errs, t.engine.Close())
		t.engine = nil
	}
	if t.stager != nil {
		errs = append(errs, t.stager.Close())
		t.stager = nil
	}
	for _, tg := range t.gpus {
		errs = append(errs, tg.close())
	}
	t.gpus = nil
	switch {
	case t.rw == nil: // a lazy team that ran nothing has none
	case clean && t.link != nil:
		if t.eps == nil {
			t.eps = &ucxmp.EndpointCache{}
		}
		errs = append(errs, t.tr.Release(t.eps), releaseLaneTransports(t.lanes))
		errs = append(errs, t.ctx.workers.put(workerSet{rw: t.rw, eps: t.eps, lanes: t.lanes}))
	default:
		if t.tr != nil {
			errs = append(errs, t.tr.Close())
		}
		errs = append(errs, t.eps.Close(), closeTeamLanes(t.lanes))
		errs = append(errs, t.rw.Close())
	}
	t.lanes, t.rw, t.eps = nil, nil, nil
	if err := errors.Join(errs...); err != nil {
		return resourceErr{err}
	}
	return nil
}

// deadline is when a collective starting now must have finished: never
// (the zero time) unless the user opted into a deadline with timeout_ms,
// as the timeout policy in exec/deadline.go has it.
func (t *Team) deadline() time.Time {
	if t.ctx.opts.timeout > 0 {
		return time.Now().Add(t.ctx.opts.timeout)
	}
	return time.Time{}
}
