package cudaexec

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// Engine is the CUDA push engine (ucxmp.DeviceEngine): a receiver exports
// its buffer's allocation with a legacy IPC handle, the sender opens the
// handle once (cached per peer and allocation) and copies into the mapping
// with cuMemcpyDtoDAsync on a stream of its own per (device, peer), an
// event per copy telling when it is done. Pushing from the sender's stream
// is what the UCX path cannot do: UCX's cuda_ipc pulls on the receiver
// after a rendezvous, about 140 us per message on one H100, where a push
// costs one copy launch and two small host messages.
//
// Memory held: the mappings of peers' allocations (no device memory of
// their own: a mapping references the exporter's; at most maxMappings,
// least recently used closed first), a stream per (device, peer) and a
// pool of events. Use from one goroutine (the transport's).
type Engine struct {
	devs    map[int]*cuda.Device
	exports map[uint64][]byte // allocation id -> key
	maps    map[mapKey]*mapping
	streams map[streamKey]*cuda.Stream
	events  map[int][]*cuda.Event // free events per device
	copies  map[uint64]engineCopy
	next    uint64
	clock   uint64 // ticks on every Start, for least-recently-used eviction

	// planner splits a transfer over several paths (engine_multipath.go);
	// nil: every transfer is one direct copy.
	planner  Planner
	stages   map[stageKey]*staging
	maxStage int64

	// parked: mappings of memory their peers freed, left open because
	// closing them might have waited for the call itself (release says
	// why); ClosePending closes them between calls. mayWait says whether
	// a driver call that may wait for the device's queued work cannot
	// wait for a call of this process (nil: always; SetMayWait).
	parked  []*mapping
	mayWait func() bool
}

// maxMappings bounds the open mappings; maxExports the cached keys.
const (
	maxMappings = 256
	maxExports  = 1024
)

// keyLen: the handle (64 bytes), the allocation's id, base and size
// (8 each) and the exporter's device ordinal (4).
const keyLen = 64 + 8 + 8 + 8 + 4

type mapKey struct {
	peer, dev int
	id        uint64
}

type mapping struct {
	buf      *cuda.Buffer
	base     uint64 // the exporter's base address and size: a new
	size     int    // allocation overlapping it means this one was freed
	lastUse  uint64
	inFlight int
}

// streamKey names a stream: device, peer and the logical stream of a
// multi-path plan (0: the direct copies).
type streamKey struct{ dev, peer, lane int }

// engineCopy is one transfer in flight: it is done when every event of
// ends is; spare are events it used on the way, pooled again then.
type engineCopy struct {
	dev   int
	ends  []*cuda.Event
	spare []*cuda.Event
	m     *mapping
}

// NewEngine makes an engine; devices open on first use.
func NewEngine() *Engine {
	return &Engine{devs: map[int]*cuda.Device{}, exports: map[uint64][]byte{}, maps: map[mapKey]*mapping{},
		streams: map[streamKey]*cuda.Stream{}, events: map[int][]*cuda.Event{}, copies: map[uint64]engineCopy{},
		stages: map[stageKey]*staging{}, maxStage: DefaultMaxStage}
}

func (e *Engine) device(ord int) (*cuda.Device, error) {
	if d := e.devs[ord]; d != nil {
		return d, nil
	}
	d, err := cuda.Open(ord)
	if err != nil {
		return nil, err
	}
	e.devs[ord] = d
	return d, nil
}

// Export implements ucxmp.DeviceEngine.
func (e *Engine) Export(r exec.Region) ([]byte, int64, error) {
	if r.Mem().Kind != exec.MemCUDA {
		return nil, 0, fmt.Errorf("cudaexec: cannot export %v memory", r.Mem())
	}
	d, err := e.device(r.Mem().Device)
	if err != nil {
		return nil, 0, err
	}
	a, err := d.AllocationOf(cuda.DevicePtr(r.Addr()))
	if err != nil {
		return nil, 0, err
	}
	off := int64(r.Addr() - uintptr(a.Base))
	if key := e.exports[a.ID]; key != nil {
		return key, off, nil
	}
	h, err := d.ExportAllocation(a)
	if err != nil {
		return nil, 0, err
	}
	if len(e.exports) >= maxExports {
		clear(e.exports) // keys are cheap to make again
	}
	key := make([]byte, keyLen)
	copy(key, h[:])
	binary.LittleEndian.PutUint64(key[64:], a.ID)
	binary.LittleEndian.PutUint64(key[72:], uint64(a.Base))
	binary.LittleEndian.PutUint64(key[80:], uint64(a.Size))
	binary.LittleEndian.PutUint32(key[88:], uint32(r.Mem().Device))
	e.exports[a.ID] = key
	return key, off, nil
}

// Start implements ucxmp.DeviceEngine: the copy runs on src's device.
func (e *Engine) Start(peer int, key []byte, off int64, src exec.Region, path sched.Path) (uint64, error) {
	if src.Mem().Kind != exec.MemCUDA {
		return 0, fmt.Errorf("cudaexec: cannot push %v memory", src.Mem())
	}
	n := src.Len()
	d, m, err := e.mappedRange(peer, key, off, n, src.Mem().Device)
	if err != nil {
		return 0, err
	}
	dst := m.buf.Ptr() + cuda.DevicePtr(off)
	var c engineCopy
	if plan := e.plan(peer, n, path); plan != nil && e.waitOK() {
		c, err = e.startPlan(d, peer, plan, dst, cuda.DevicePtr(src.Addr()))
	} else {
		c, err = e.startDirect(d, peer, dst, cuda.DevicePtr(src.Addr()), n)
	}
	if err != nil {
		return 0, err
	}
	e.clock++
	m.lastUse = e.clock
	m.inFlight++
	c.m = m
	e.next++
	e.copies[e.next] = c
	return e.next, nil
}

// Map implements direct.Mapper: n bytes at off of the peer's
// allocation key names, mapped into this process on device on.Device
// (cached as Start's mappings are) and kept open until Release.
func (e *Engine) Map(peer int, key []byte, off, n int64, on exec.Mem) (exec.Region, error) {
	if on.Kind != exec.MemCUDA {
		return exec.Region{}, fmt.Errorf("cudaexec: cannot map a peer's buffer as %v memory", on)
	}
	_, m, err := e.mappedRange(peer, key, off, n, on.Device)
	if err != nil {
		return exec.Region{}, err
	}
	e.clock++
	m.lastUse = e.clock
	m.inFlight++
	return exec.DeviceRegion(on, uintptr(m.buf.Ptr())+uintptr(off), n), nil
}

// mappedRange is the mapping, in device ord's context, of the peer's
// allocation key names, checked to hold n bytes at off (Start's and Map's
// common part; neither pins it here).
func (e *Engine) mappedRange(peer int, key []byte, off, n int64, ord int) (*cuda.Device, *mapping, error) {
	if len(key) != keyLen {
		return nil, nil, fmt.Errorf("cudaexec: rank %d's buffer key has %d bytes, want %d", peer, len(key), keyLen)
	}
	d, err := e.device(ord)
	if err != nil {
		return nil, nil, err
	}
	m, err := e.mapping(d, peer, key)
	if err != nil {
		return nil, nil, err
	}
	// n > size-off, not off+n > size: off comes from the peer's
	// clear-to-send, and a huge one would wrap off+n below the size.
	if off < 0 || n < 0 || off > int64(m.size) || n > int64(m.size)-off {
		return nil, nil, fmt.Errorf("cudaexec: %d bytes at offset %d run off rank %d's %d-byte allocation", n, off, peer, m.size)
	}
	return d, m, nil
}

// Release implements direct.Mapper: the mapping may be evicted again.
func (e *Engine) Release(peer int, key []byte) {
	if len(key) != keyLen {
		return
	}
	id := binary.LittleEndian.Uint64(key[64:])
	for k, m := range e.maps {
		if k.peer == peer && k.id == id && m.inFlight > 0 {
			m.inFlight--
			return
		}
	}
}

// startDirect queues one copy on the peer's direct stream.
func (e *Engine) startDirect(d *cuda.Device, peer int, dst, src cuda.DevicePtr, n int64) (engineCopy, error) {
	s, err := e.stream(d, peer, 0)
	if err != nil {
		return engineCopy{}, err
	}
	if err := cuda.CopyAddrAsync(s, dst, src, int(n)); err != nil {
		return engineCopy{}, err
	}
	ev, err := e.recordOn(d, s)
	if err != nil {
		// The copy is queued and cannot be withdrawn: a failed Start
		// must not return while it still writes into the peer's memory
		// (the peer is told the push failed, and no copy pins the
		// mapping). The engine's own stream: this waits for the copy
		// alone.
		_ = s.Synchronize()
		return engineCopy{}, err
	}
	return engineCopy{dev: d.Ordinal(), ends: []*cuda.Event{ev}}, nil
}

// recordOn records a pooled event on s.
func (e *Engine) recordOn(d *cuda.Device, s *cuda.Stream) (*cuda.Event, error) {
	ev, err := e.event(d)
	if err != nil {
		return nil, err
	}
	if err := ev.Record(s); err != nil {
		e.events[d.Ordinal()] = append(e.events[d.Ordinal()], ev)
		return nil, err
	}
	return ev, nil
}

// mapping opens (or finds) the mapping of the allocation key names, in
// d's context. A cached mapping of the same peer that overlaps the new
// allocation's range belongs to memory the peer has freed: it leaves the
// cache (release closes it, or parks it until a close cannot block).
func (e *Engine) mapping(d *cuda.Device, peer int, key []byte) (*mapping, error) {
	k := mapKey{peer: peer, dev: d.Ordinal(), id: binary.LittleEndian.Uint64(key[64:])}
	if m := e.maps[k]; m != nil {
		return m, nil
	}
	base, size := binary.LittleEndian.Uint64(key[72:]), int(binary.LittleEndian.Uint64(key[80:]))
	for ok, om := range e.maps {
		if ok.peer == peer && ok.dev == k.dev && om.inFlight == 0 && base < om.base+uint64(om.size) && om.base < base+uint64(size) {
			delete(e.maps, ok)
			e.release(om)
		}
	}
	if len(e.maps) >= maxMappings {
		e.evictOldest()
	}
	var h cuda.IPCHandle
	copy(h[:], key[:64])
	buf, err := d.OpenIPC(h, size)
	if errors.Is(err, cuda.ErrAlreadyMapped) {
		// The peer freed memory and allocated again where it was: this
		// process maps a peer's allocation at the same place in its own
		// address space as the peer has it, so the new one cannot be
		// mapped while a mapping of the old one (parked here, or another
		// team's) is still open.
		switch {
		case len(e.parked) > 0 && e.ClosePending():
			buf, err = d.OpenIPC(h, size)
		case !e.waitOK():
			err = fmt.Errorf("%w (%v)", exec.ErrMappingBusy, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cudaexec: mapping rank %d's device buffer (exported on device %d): %w", peer, binary.LittleEndian.Uint32(key[88:]), err)
	}
	m := &mapping{buf: buf, base: base, size: size}
	e.maps[k] = m
	return m, nil
}

func (e *Engine) unmap(k mapKey, m *mapping) {
	delete(e.maps, k)
	e.release(m)
}

// SetMayWait tells the engine when a driver call that may wait for the
// device's queued work cannot wait for a call of this process: f reports
// it (nil: always). UCC's generic triggered post holds the caller's
// stream with an executor until the call completes, and inside such a
// call two such driver calls never returned: cuIpcCloseMemHandle (two
// H200s, and 4 ranks on one H200: ucc_perftest -T through goring stopped
// there at its second or third size) and cuStreamCreate (ucc_test_mpi's
// triggered bcast, 4 ranks on one H200); docs/gpu.md "The caller's
// stream". Neither helps on a goroutine of its own: it holds the driver,
// and the call's next copy waited behind it. While f says no, the engine
// parks mappings instead of closing them, makes no stream (a copy goes on
// one it has: Prepare makes them) and splits no transfer over staged
// paths (their buffers are allocated on first use).
func (e *Engine) SetMayWait(f func() bool) { e.mayWait = f }

// waitOK reports whether a driver call may wait for the device now.
func (e *Engine) waitOK() bool { return e.mayWait == nil || e.mayWait() }

// Prepare makes, on device ord, the stream of the direct copies to each
// of peers and an event for each, so that a call under a held stream
// needs no new one (SetMayWait). Call it while nothing holds the device;
// where something does, it makes one stream at most (the copies share
// it), as Start would.
func (e *Engine) Prepare(ord int, peers []int) error {
	d, err := e.device(ord)
	if err != nil {
		return err
	}
	for _, p := range peers {
		if _, err := e.stream(d, p, 0); err != nil {
			return err
		}
	}
	for len(e.events[ord]) < len(peers) {
		ev, err := d.NewEvent(false)
		if err != nil {
			return err
		}
		e.events[ord] = append(e.events[ord], ev)
	}
	return nil
}

// release closes m, a mapping that has left the cache, where a close
// cannot wait for a call (waitOK); else it is parked until
// ClosePending. Until then, memory its peer allocated again at its place
// cannot be mapped (mapping says exec.ErrMappingBusy), and the transport
// stages those transfers through host memory instead.
func (e *Engine) release(m *mapping) {
	if e.waitOK() {
		_ = m.buf.Free()
		return
	}
	e.parked = append(e.parked, m)
}

// ClosePending closes the parked mappings, where a close cannot wait for
// a call (SetMayWait), and reports whether none is left. Call it between
// calls: the team does before each post.
func (e *Engine) ClosePending() bool {
	if len(e.parked) == 0 {
		return true
	}
	if !e.waitOK() {
		return false
	}
	for _, m := range e.parked {
		_ = m.buf.Free()
	}
	clear(e.parked)
	e.parked = e.parked[:0]
	return true
}

// evictOldest closes the least recently used idle mapping.
func (e *Engine) evictOldest() {
	var victim mapKey
	var vm *mapping
	for k, m := range e.maps {
		if m.inFlight == 0 && (vm == nil || m.lastUse < vm.lastUse) {
			victim, vm = k, m
		}
	}
	if vm != nil {
		e.unmap(victim, vm)
	}
}

// stream is the stream of the peer's copies on lane of device d, made on
// first use; where the device may not be waited for (SetMayWait), one the
// engine has instead: the peer's direct stream, else any of d's. Sharing
// a stream only orders copies that could have overlapped.
func (e *Engine) stream(d *cuda.Device, peer, lane int) (*cuda.Stream, error) {
	k := streamKey{dev: d.Ordinal(), peer: peer, lane: lane}
	if s := e.streams[k]; s != nil {
		return s, nil
	}
	if !e.waitOK() {
		if s := e.streams[streamKey{dev: k.dev, peer: peer}]; s != nil {
			return s, nil
		}
		for sk, s := range e.streams {
			if sk.dev == k.dev {
				return s, nil
			}
		}
	}
	s, err := d.NewStream()
	if err != nil {
		return nil, err
	}
	e.streams[k] = s
	return s, nil
}

func (e *Engine) event(d *cuda.Device) (*cuda.Event, error) {
	free := e.events[d.Ordinal()]
	if k := len(free); k > 0 {
		ev := free[k-1]
		e.events[d.Ordinal()] = free[:k-1]
		return ev, nil
	}
	return d.NewEvent(false)
}

// Done implements ucxmp.DeviceEngine.
func (e *Engine) Done(ticket uint64) (bool, error) {
	c, ok := e.copies[ticket]
	if !ok {
		return false, fmt.Errorf("cudaexec: unknown copy %d", ticket)
	}
	for len(c.ends) > 0 {
		done, err := c.ends[0].Done()
		if !done && err == nil {
			e.copies[ticket] = c
			return false, nil
		}
		c.spare = append(c.spare, c.ends[0])
		c.ends = c.ends[1:]
		if err != nil {
			e.retire(ticket, c)
			return true, err
		}
	}
	e.retire(ticket, c)
	return true, nil
}

// Finish implements ucxmp.DeviceEngine.
func (e *Engine) Finish(ticket uint64) error {
	c, ok := e.copies[ticket]
	if !ok {
		return nil
	}
	var errs []error
	for _, ev := range c.ends {
		errs = append(errs, ev.Synchronize())
	}
	e.retire(ticket, c)
	return errors.Join(errs...)
}

func (e *Engine) retire(ticket uint64, c engineCopy) {
	delete(e.copies, ticket)
	c.m.inFlight--
	e.events[c.dev] = append(e.events[c.dev], c.spare...)
	e.events[c.dev] = append(e.events[c.dev], c.ends...)
}

// Close waits for the copies in flight and releases mappings, streams,
// events and devices.
func (e *Engine) Close() error {
	var errs []error
	for t := range e.copies {
		errs = append(errs, e.Finish(t))
	}
	for k, m := range e.maps {
		errs = append(errs, m.buf.Free())
		delete(e.maps, k)
	}
	for _, m := range e.parked {
		errs = append(errs, m.buf.Free())
	}
	e.parked = nil
	errs = append(errs, e.freeStages())
	for k, s := range e.streams {
		errs = append(errs, s.Destroy())
		delete(e.streams, k)
	}
	for ord, evs := range e.events {
		for _, ev := range evs {
			errs = append(errs, ev.Destroy())
		}
		delete(e.events, ord)
	}
	for ord, d := range e.devs {
		errs = append(errs, d.Close())
		delete(e.devs, ord)
	}
	return errors.Join(errs...)
}
