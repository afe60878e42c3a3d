package team

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/ucx"
)

// MemArg is the memory type a caller says its buffers have.
type MemArg int

const (
	MemHost    MemArg = iota
	MemCUDA           // CUDA device memory
	MemUnknown        // not said: the CUDA driver is asked
)

// teamGPU is what a team needs to run collectives on one GPU's memory:
// the device (for scratch and in-place copies) and one executor (a stream
// and its events) for the copies and reductions of the team's calls, which
// run one at a time.
type teamGPU struct {
	g     *cudaexec.GPU
	local *cudaexec.Local
}

func (tg *teamGPU) close() error {
	return errors.Join(tg.local.Close(), tg.g.Close())
}

// memoryOf decides where the caller's buffers are, by the driver's word
// for the destination (source and destination share a memory type in
// UCC's calls goring accepts): host memory, or CUDA device memory of
// GPU N. A buffer said to be CUDA memory that the driver calls host
// memory is the caller's error; memory goring cannot run on (managed
// memory, no driver for a buffer said to be device memory) is another
// layer's.
func memoryOf(a Args) (exec.Mem, error) {
	if a.Mem == MemHost {
		return exec.Host, nil
	}
	m, err := memoryOfBuffer(a, a.Dst)
	if err != nil || a.Mem != MemUnknown || a.InPlace || a.Src == nil || a.Src == a.Dst {
		return m, err
	}
	// A caller that does not know where its buffers are may have them in
	// two places; goring runs a call on one memory, so that is refused,
	// not run as if the source were where the destination is.
	src, err := memoryOfBuffer(a, a.Src)
	if err != nil {
		return exec.Mem{}, err
	}
	if src != m {
		return exec.Mem{}, Invalid("source buffer %p is in %v and destination %p in %v: a call's buffers must be in one memory", a.Src, src, a.Dst, m)
	}
	return m, nil
}

// memoryOfBuffer is memoryOf's verdict on one of the call's buffers.
func memoryOfBuffer(a Args, p unsafe.Pointer) (exec.Mem, error) {
	kind, ord, err := cuda.PointerInfo(uintptr(p))
	switch {
	case cuda.IsNoDriver(err) && a.Mem == MemUnknown:
		return exec.Host, nil // no CUDA in this process: no device memory either
	case cuda.IsNoDriver(err):
		return exec.Mem{}, NotSupported("CUDA memory without a CUDA driver: %v", err)
	case err != nil:
		return exec.Mem{}, invalidErr{err}
	}
	switch kind {
	case cuda.PointerDevice:
		return exec.CUDA(ord), nil
	case cuda.PointerManaged:
		return exec.Mem{}, NotSupported("CUDA managed memory")
	}
	if a.Mem == MemCUDA {
		return exec.Mem{}, Invalid("buffer %p was passed as CUDA memory, but the CUDA driver knows it as host memory", p)
	}
	return exec.Host, nil
}

// gpu returns the team's GPU state for device ord, opening it on first
// use; the team's UCX must move CUDA memory. Caller holds t.mu.
func (t *Team) gpu(ord int) (*teamGPU, error) {
	if tg := t.gpus[ord]; tg != nil {
		return tg, nil
	}
	// Without CUDA in UCX, device messages the push engine does not carry
	// (peers on other hosts, or ipc=n) are staged through pinned host
	// memory: slower, but the collective runs. With CUDA in UCX, those of
	// peers on other nodes are staged too where the nodes are joined by
	// TCP only (stage.go): faster there than UCX's own pipeline.
	moves := t.memTypes.Has(ucx.MemCUDA)
	stage := !moves || (!t.oneHost && t.otherNode != nil && stageRemoteWanted(os.Getenv(stageRemoteEnv), rdmaDevices()))
	if stage && t.stager == nil && (t.engine == nil || !t.oneHost) {
		st, err := cudaexec.NewStager(ord)
		if err != nil {
			if moves {
				return nil, resourceErr{fmt.Errorf("CUDA memory: host staging for peers on other nodes cannot start (%s=0 leaves them to UCX): %w", stageRemoteEnv, err)}
			}
			return nil, notSupportedErr{fmt.Errorf("CUDA memory: the UCX in use (%s) moves none, and host staging cannot start: %w", ucx.Library(), err)}
		}
		t.stager = st
		if moves {
			t.tr.StageRemote(st, t.otherNode)
		} else {
			t.tr.UseStager(st)
		}
	}
	if t.stager == nil && t.engine != nil && moves {
		// Staging as the push engine's fallback alone: a push whose
		// mapping cannot be made during a call under a held stream
		// (exec.ErrMappingBusy, held.go) is staged instead. UCX moves
		// CUDA memory here, so no other message is staged.
		if st, err := cudaexec.NewStager(ord); err == nil {
			t.stager = st
			t.tr.UseStager(st)
		}
	}
	// What a call under a held stream may need, made now (held.go): the
	// stager's stream and the engine's streams to this host's peers. A
	// failure here is the call's to meet later, the usual way.
	if t.stager != nil {
		t.stager.SetMayWait(noHeldCall)
		_ = t.stager.Prepare()
	}
	if t.engine != nil {
		_ = t.engine.Prepare(ord, t.enginePeers)
	}
	g, err := cudaexec.Open(ord)
	if err != nil {
		return nil, notSupportedErr{fmt.Errorf("CUDA device %d: %w", ord, err)}
	}
	g.PollEvery = t.ctx.devicePoll
	// Every kernel the team may launch loaded now, before a call of the
	// team can run behind work its caller holds on a stream
	// (cuda.Device.LoadKernels says why). A family that does not load
	// fails the calls that launch it, with the same error, and the
	// copy-only calls still run.
	_ = t.loadKernels(g.Device())
	l, err := g.Local()
	if err != nil {
		_ = g.Close()
		return nil, resourceErr{err}
	}
	if t.gpus == nil {
		t.gpus = map[int]*teamGPU{}
	}
	tg := &teamGPU{g: g, local: l}
	t.gpus[ord] = tg
	return tg, nil
}

// loadKernelsOn loads GPU ord's kernels now, for a call whose GPU the
// team opens only when it has connected, which may be behind work the
// caller holds on a stream (cuda.Device.LoadKernels says why). They stay
// loaded for the process (package cuda retains the GPU's primary context
// for its modules), so once a load of the families the team needs has
// worked, a later call of the team loads nothing: it would cost a device
// open, the lookups and a close (three driver calls and more) on every
// call of a lazy team. Only a load that worked counts; a failure here is
// the later launch's to report, and the next call tries again, as before.
// A load without the node family does not count for a team that needs it
// (mayRunNode is read at each call). Caller holds t.mu.
func (t *Team) loadKernelsOn(ord int) {
	node := t.mayRunNode()
	if have, ok := t.kernelsOn[ord]; ok && (have || !node) {
		return
	}
	if loadKernelsOnGPU(ord, node) != nil {
		return
	}
	if t.kernelsOn == nil {
		t.kernelsOn = map[int]bool{}
	}
	t.kernelsOn[ord] = node
}

// loadKernelsOnGPU opens GPU ord, loads its kernel families (the node
// collectives' too where node says so) and closes it again; a variable so
// that tests can count the loads on a machine without a GPU.
var loadKernelsOnGPU = func(ord int, node bool) error {
	d, err := cuda.Open(ord)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return loadFamilies(d, node)
}

// loadKernels loads on d the kernel families the team may launch: the
// node collectives only where its shape can run them (mayRunNode).
func (t *Team) loadKernels(d *cuda.Device) error { return loadFamilies(d, t.mayRunNode()) }

// loadFamilies loads on d every kernel family, or all but the node
// collectives' (19 MB of modules a team that cannot run them never
// needs).
func loadFamilies(d *cuda.Device, node bool) error {
	if node {
		return d.LoadKernels()
	}
	return d.LoadKernelsButNode()
}

// deviceRegion is n bytes of the caller's device memory at p.
func deviceRegion(mem exec.Mem, p unsafe.Pointer, n int64) exec.Region {
	return exec.DeviceRegion(mem, uintptr(p), n)
}

// current makes the call's GPU context current on this thread before UCX
// runs on it: UCX's CUDA transports work in the thread's current context,
// and UCC progresses from whatever thread it likes. One cuCtxSetCurrent
// (tens of nanoseconds); nothing for host memory.
func (c *Coll) current() {
	if c.gpu != nil {
		if err := c.gpu.g.Device().MakeCurrent(); err != nil && c.err == nil {
			c.abort(err)
		}
	}
}

// choice is goring's choice for c on B bytes on this team (choose.Auto):
// the measured table's where it has a row for the team's shape, else the
// model's on the team's topology. Every rank reaches the same one: the
// shape and the topology are the team's, the same on every rank.
func (t *Team) choice(c coll.Collective, B int64, host bool) choose.Choice {
	push := t.engine != nil && t.oneHost
	s := choose.Shape{Coll: c, Bytes: B, Host: host, Size: t.size, Push: push, SharedGPU: push && t.sharedGPU}
	if t.topo != nil { // a team has one from creation (tests may make one without)
		s.Nodes = t.topo.NumNodes()
	}
	if push {
		s.GPUs = t.hostGPUs()
	}
	k := choiceKey{shape: s, topo: t.topo, table: unsafe.SliceData(choose.Table), rows: len(choose.Table)}
	if ch, ok := t.choices.get(k); ok {
		return ch
	}
	ch := chooseFor(s, t.topo)
	t.choices.put(k, ch)
	return ch
}

// chooseFor is choose.Auto's choice for s on topology tp: the measured
// table's, else the model's.
func chooseFor(s choose.Shape, tp *topo.Topology) choose.Choice {
	if ch, ok := choose.Measured(s); ok {
		return ch
	}
	var costs *model.CostTable // the model, where no row covers the shape
	if s.Bytes > 0 && tp != nil && s.Size <= choose.ModelMaxRanks {
		costs = choose.Costs(s.Coll, tp, sim.Options{})
	}
	ch, _ := choose.Auto(s, costs)
	return ch
}

// choiceKey is everything a choice depends on: the shape (which holds
// what of the team the choice reads: its size, nodes, GPUs, push engine
// and shared GPU), the topology the model prices it on, and the table
// choose.Measured scans (where a program replaces it, no answer from the
// old one is reused).
type choiceKey struct {
	shape choose.Shape
	topo  *topo.Topology
	table *choose.Row
	rows  int
}

// choiceMemo keeps a team's choices: a call that names no algorithm asks
// goring's choice two or three times (the algorithm, the node runner's
// check, the pieces), and each is a scan of choose.Table, which cost
// 0.6 us a call on the node path. The key holds every input, so a
// choice cannot go stale: a team whose shape changes (connect) asks
// with another key. Its own lock: the scores ask without the team's.
// Bounded: emptied when full (a team calls with a few sizes, or many
// once each).
type choiceMemo struct {
	mu     sync.Mutex
	m      map[choiceKey]choose.Choice
	misses int // choices computed, not found (tests)
}

const choiceMemoMax = 64

func (m *choiceMemo) get(k choiceKey) (choose.Choice, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.m[k]
	if !ok {
		m.misses++
	}
	return ch, ok
}

func (m *choiceMemo) put(k choiceKey, ch choose.Choice) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= choiceMemoMax {
		m.m = make(map[choiceKey]choose.Choice, choiceMemoMax)
	}
	m.m[k] = ch
}

// deviceCount is how many GPUs this process sees (0 where the driver
// says nothing), asked once per team: the choice needs it on every call.
func (t *Team) deviceCount() int {
	t.gpuCountOnce.Do(func() { t.gpuCount, _ = cuda.DeviceCount() })
	return t.gpuCount
}

// hostGPUs is the GPU count of the team's shape (choose.Shape.GPUs,
// tune.Shape.GPUs): where every rank's process sees one GPU, the GPUs
// the cards name (a GPU each where they name as many as there are
// ranks, as CUDA_VISIBLE_DEVICES per rank makes them, although no
// process sees more than its own); else the GPUs this process sees.
func (t *Team) hostGPUs() int {
	if t.cardGPUs > 0 {
		return t.cardGPUs
	}
	return t.deviceCount()
}

// deviceChunks is the pieces a call's transfers pipeline in (0: none):
// the call's own (Args.Chunks), else for calls on CUDA buffers that run
// goring's choice, that choice's (Choice.Chunks).
func (t *Team) deviceChunks(a Args, B int64, mem exec.Mem) int {
	if a.Chunks > 0 {
		return a.Chunks
	}
	if mem.IsHost() || a.Alg != "" || t.ctx.opts.chosen[a.Coll] {
		return 0
	}
	return t.choice(a.Coll, B, false).Chunks
}
