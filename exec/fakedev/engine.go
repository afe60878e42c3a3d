package fakedev

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// Engine is the fake device's push engine (ucxmp.DeviceEngine) for ranks
// that share one arena. Export names an allocation; Start maps it under a
// new address, an alias of the same bytes as an IPC mapping is, and queues
// the copy; Done runs a copy only after a random number of polls, so a
// transport that reported a transfer before its copy finished would leave
// stale bytes for the receiver and fail a contents test.
type Engine struct {
	a       *Arena
	rng     *rand.Rand
	aliases map[uint64]uintptr // allocation serial -> this engine's mapping of it
	copies  map[uint64]fakeCopy
	next    uint64
	// Mapped counts the mappings opened, Started the copies: tests check
	// that mappings are cached. Planned counts the copies carried by a
	// plan with a staged path (engine_plan.go).
	Mapped, Started, Planned int
	// Busy, when set, is asked before each copy whether the receiver's
	// buffer cannot be mapped now: Start then fails with
	// exec.ErrMappingBusy, as the CUDA engine does while a mapping of
	// memory the peer freed cannot be closed. Busied counts them.
	Busy   func() bool
	Busied int

	planner Planner
	stages  map[stageKey]*fakeStage
}

// fakeCopy is one transfer in flight: a single copy, or a plan's ops.
type fakeCopy struct {
	dst, src exec.Region
	plan     *planRun
}

// Engine returns the push engine of one rank (rank seeds its order).
func (a *Arena) Engine(rank int) *Engine {
	return &Engine{a: a, rng: rand.New(rand.NewPCG(a.seed, uint64(rank)+1)), aliases: map[uint64]uintptr{}, copies: map[uint64]fakeCopy{},
		stages: map[stageKey]*fakeStage{}}
}

// Export implements ucxmp.DeviceEngine: the key is the allocation's
// address and serial number.
func (e *Engine) Export(r exec.Region) ([]byte, int64, error) {
	e.a.mu.Lock()
	defer e.a.mu.Unlock()
	if _, err := e.a.bytes(r); err != nil {
		return nil, 0, err
	}
	al := e.a.allocs[e.a.find(r.Addr())]
	key := make([]byte, 16)
	binary.LittleEndian.PutUint64(key, uint64(al.addr))
	binary.LittleEndian.PutUint64(key[8:], al.serial)
	return key, int64(r.Addr() - al.addr), nil
}

// Start implements ucxmp.DeviceEngine.
func (e *Engine) Start(peer int, key []byte, off int64, src exec.Region, path sched.Path) (uint64, error) {
	if e.Busy != nil && e.Busy() {
		e.Busied++
		return 0, fmt.Errorf("fakedev: rank %d's buffer: %w", peer, exec.ErrMappingBusy)
	}
	e.a.mu.Lock()
	defer e.a.mu.Unlock()
	dst, err := e.mapLocked(peer, key, off, src.Len(), src.Mem())
	if err != nil {
		return 0, err
	}
	e.next++
	c := fakeCopy{dst: dst, src: src}
	if pl := e.plan(peer, src.Len(), path); pl != nil {
		c.plan = e.startPlan(e.next, peer, pl)
		e.Planned++
	}
	e.copies[e.next] = c
	e.Started++
	return e.next, nil
}

// Map implements direct.Mapper: n bytes at off of the allocation key
// names, under this engine's alias of it (made once per allocation).
func (e *Engine) Map(peer int, key []byte, off, n int64, on exec.Mem) (exec.Region, error) {
	e.a.mu.Lock()
	defer e.a.mu.Unlock()
	return e.mapLocked(peer, key, off, n, on)
}

// Release implements direct.Mapper: aliases stay until the arena goes.
func (e *Engine) Release(peer int, key []byte) {}

// mapLocked finds or makes the alias of key's allocation. Caller holds
// e.a.mu.
func (e *Engine) mapLocked(peer int, key []byte, off, n int64, on exec.Mem) (exec.Region, error) {
	if len(key) != 16 {
		return exec.Region{}, fmt.Errorf("fakedev: key of %d bytes", len(key))
	}
	addr, serial := uintptr(binary.LittleEndian.Uint64(key)), binary.LittleEndian.Uint64(key[8:])
	i := e.a.find(addr)
	if i < 0 || e.a.allocs[i].addr != addr || e.a.allocs[i].serial != serial {
		return exec.Region{}, fmt.Errorf("fakedev: rank %d's key names no allocation", peer)
	}
	al := e.a.allocs[i]
	if off < 0 || off+n > int64(len(al.b)) {
		return exec.Region{}, fmt.Errorf("fakedev: %d bytes at %d run off rank %d's %d-byte allocation", n, off, peer, len(al.b))
	}
	alias, ok := e.aliases[serial]
	if !ok {
		alias = e.a.alias(al, on)
		e.aliases[serial] = alias
		e.Mapped++
	}
	return exec.DeviceRegion(on, alias+uintptr(off), n), nil
}

// Done implements ucxmp.DeviceEngine: a copy finishes (runs) at random.
func (e *Engine) Done(ticket uint64) (bool, error) {
	if _, ok := e.copies[ticket]; !ok {
		return false, fmt.Errorf("fakedev: unknown ticket %d", ticket)
	}
	if c := e.copies[ticket]; c.plan != nil {
		return e.stepPlan(ticket, c, false)
	}
	if e.rng.IntN(3) != 0 {
		return false, nil
	}
	return true, e.Finish(ticket)
}

// Finish implements ucxmp.DeviceEngine.
func (e *Engine) Finish(ticket uint64) error {
	c, ok := e.copies[ticket]
	if !ok {
		return fmt.Errorf("fakedev: unknown ticket %d", ticket)
	}
	if c.plan != nil {
		_, err := e.stepPlan(ticket, c, true)
		return err
	}
	delete(e.copies, ticket)
	return e.a.Copy(c.dst, c.src)
}

// find is the index of the allocation that holds addr, or -1. Caller
// holds a.mu.
func (a *Arena) find(addr uintptr) int {
	return sort.Search(len(a.allocs), func(i int) bool { return a.allocs[i].addr > addr }) - 1
}

// alias maps al's bytes at a new address as memory mem (an importer's
// mapping). Caller holds a.mu.
func (a *Arena) alias(al allocation, mem exec.Mem) uintptr {
	addr := a.next
	a.allocs = append(a.allocs, allocation{mem: mem, addr: addr, b: al.b, serial: al.serial})
	a.next += (uintptr(len(al.b)) + 2*align - 1) / align * align
	return addr
}
