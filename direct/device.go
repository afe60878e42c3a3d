package direct

import (
	"errors"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// Mapper names a rank's buffers for the leader and opens them there:
// package cudaexec's Engine (CUDA IPC handles, mappings cached per peer
// and allocation) and exec/fakedev's for the tests.
type Mapper interface {
	// Export is the key of the allocation that holds r, and r's offset
	// in it (at most MaxKeyLen bytes).
	Export(r exec.Region) (key []byte, off int64, err error)
	// Map is n bytes at off of peer's allocation key, as the leader's
	// device work on memory type on addresses it. The mapping is the
	// mapper's to keep; it stays open at least until Release.
	Map(peer int, key []byte, off, n int64, on exec.Mem) (exec.Region, error)
	// Release says a call no longer uses a mapping Map returned.
	Release(peer int, key []byte)
}

// MaxKeyLen bounds a Mapper's key (ucxmp.MaxKeyLen, the same bound the
// push protocol's clear-to-send has).
const MaxKeyLen = 128

// Algorithm is the name of the leader algorithms in package sched: on a
// team whose ranks share one GPU, a call of one of them on device memory
// runs here instead of as the program's messages.
const Algorithm = "leader"

// Runs reports whether a call of alg on c by a team of size ranks that
// share one GPU runs on the device backend, its buffers on the device:
// the leader algorithm, of a collective it serves. The team layer and
// goring bench choose by it alike.
func Runs(alg string, c coll.Collective, size int) bool {
	return alg == Algorithm && Serves(c, size)
}

// Serves reports whether c on a team of size ranks has a leader algorithm
// on the device backend: allreduce, allgather and bcast at any size,
// reduce_scatter while one fused step serves a block (up to
// exec.MultiMax ranks, ReduceScatterPlan).
func Serves(c coll.Collective, size int) bool {
	switch c {
	case coll.Allreduce, coll.Allgather, coll.Bcast:
		return true
	case coll.ReduceScatter:
		return size <= exec.MultiMax
	}
	return false
}

// Device is the device backend: rank 0 (the leader) maps every rank's
// buffers through Mapper and runs the plan on Local; the other ranks only
// name their buffers and wait for its DONE.
type Device struct {
	Mapper Mapper
	// Local runs the leader's copies and reductions (rank 0 only).
	Local exec.LocalExecutor
	// Fuse bounds the operands of one op where Local runs exec.MultiOps
	// (0: exec.MultiMax; 1: pairwise ops only). Only rank 0's counts.
	Fuse int
	// Stats is where the calls' phases are summed (nil: nowhere); a team
	// shares one across its calls' Devices.
	Stats *Stats
}

// deviceCall is a call's state on the device backend (the leader's).
type deviceCall struct {
	mapped []mappedKey
	ops    []Op
	run    exec.LocalRun
}

type mappedKey struct {
	peer int
	key  []byte
}

// reuse is the state for the next call: the storage kept, nothing to
// run until the leader opens the peers' buffers.
func (d deviceCall) reuse() deviceCall {
	d.run.Begin(nil, nil, 0, 0, 0)
	return deviceCall{mapped: d.mapped[:0], run: d.run}
}

func (*Device) check(cfg Config) error {
	if !Serves(cfg.Collective, cfg.Size) {
		return fmt.Errorf("no leader algorithm for %s on %d ranks", cfg.Collective, cfg.Size)
	}
	if cfg.Collective == coll.Bcast && (cfg.Root < 0 || cfg.Root >= cfg.Size) {
		return fmt.Errorf("bcast root %d of a team of %d", cfg.Root, cfg.Size)
	}
	return nil
}

func (*Device) everyone() bool    { return false }
func (*Device) fallback() error   { return ErrUnmapped }
func (*Device) verdict() bool     { return false }
func (*Device) probe(*Call) error { return nil }
func (*Device) passed()           {}
func (d *Device) timing() *Stats  { return d.Stats }

// The device body of ARRIVE: the rank's two buffers as the leader maps
// them.
//
//	[0:2]  source key length   [2:4] result key length
//	[4:12] source offset in its allocation   [12:20] result offset
//	[20:]  source key, then result key
const deviceKeysAt = 20

type bufferKey struct {
	key      []byte
	off, len int64
}

func (d *Device) arrive(c *Call, b []byte) error {
	src, serr := d.export(c.cfg.Src)
	dst, derr := d.export(c.cfg.Dst)
	if err := errors.Join(serr, derr); err != nil {
		return fmt.Errorf("export its buffers: %w", err)
	}
	le.PutUint16(b[0:], uint16(len(src.key)))
	le.PutUint16(b[2:], uint16(len(dst.key)))
	le.PutUint64(b[4:], uint64(src.off))
	le.PutUint64(b[12:], uint64(dst.off))
	copy(b[deviceKeysAt:], src.key)
	copy(b[deviceKeysAt+len(src.key):], dst.key)
	return nil
}

func (d *Device) export(r exec.Region) (bufferKey, error) {
	key, off, err := d.Mapper.Export(r)
	if err == nil && len(key) > MaxKeyLen {
		err = fmt.Errorf("a key of %d bytes, at most %d", len(key), MaxKeyLen)
	}
	if err != nil {
		return bufferKey{}, fmt.Errorf("%v: %w", r, err)
	}
	return bufferKey{key: key, off: off, len: r.Len()}, nil
}

// readKeys decodes rank's device body (the lengths from the header);
// the keys alias b.
func readKeys(b []byte, rank int, srcLen, dstLen int64) (src, dst bufferKey, err error) {
	sl, dl := int(le.Uint16(b[0:])), int(le.Uint16(b[2:]))
	if sl > MaxKeyLen || dl > MaxKeyLen {
		return src, dst, fmt.Errorf("rank %d sent keys of %d and %d bytes, at most %d each", rank, sl, dl, MaxKeyLen)
	}
	src = bufferKey{key: b[deviceKeysAt : deviceKeysAt+sl], off: int64(le.Uint64(b[4:])), len: srcLen}
	dst = bufferKey{key: b[deviceKeysAt+sl : deviceKeysAt+sl+dl], off: int64(le.Uint64(b[12:])), len: dstLen}
	return src, dst, nil
}

// open maps every rank's buffers and makes the call's plan (the
// leader's).
func (d *Device) open(c *Call, bodies [][]byte) error {
	n := c.cfg.Size
	srcs, dsts := make([]exec.Region, n), make([]exec.Region, n)
	srcs[0], dsts[0] = c.cfg.Src, c.cfg.Dst
	// Buffers that cannot be mapped make the call ErrUnmapped (the
	// caller may run it another way).
	var errs []error
	for r := 1; r < n; r++ {
		src, dst, err := readKeys(bodies[r], r, c.cfg.Src.Len(), c.cfg.Dst.Len())
		if err == nil {
			srcs[r], err = d.open1(c, r, src)
		}
		if err == nil {
			dsts[r], err = d.open1(c, r, dst)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	// The device's reduction kernels take elements at aligned addresses;
	// a rank's buffer may start anywhere (MPI allows it). Such a call runs
	// as messages, where that rank reduces in aligned copies of its own.
	if c.cfg.Collective.Reduces() {
		size := uintptr(c.cfg.Dtype.Size())
		for r := range n {
			for _, b := range []exec.Region{srcs[r], dsts[r]} {
				if b.Len() > 0 && b.Addr()%size != 0 {
					errs = append(errs, fmt.Errorf("rank %d's buffer at %#x is not aligned to the %d bytes of %v", r, b.Addr(), size, c.cfg.Dtype))
				}
			}
		}
	}
	if len(errs) > 0 {
		d.release(c)
		return fallback{ErrUnmapped, errors.Join(errs...)}
	}
	fuse := 1
	if _, ok := d.Local.(exec.MultiLocal); ok {
		fuse = exec.MultiMax
		if d.Fuse > 0 {
			fuse = min(d.Fuse, exec.MultiMax)
		}
	}
	switch c.cfg.Collective {
	case coll.Allreduce:
		c.dev.ops = AllreducePlan(srcs, dsts, fuse)
	case coll.Allgather:
		c.dev.ops = AllgatherPlan(srcs, dsts, fuse)
	case coll.ReduceScatter:
		if n > fuse {
			d.release(c)
			return fmt.Errorf("a reduce_scatter on one device is one fused step per block: at most %d ranks with this executor, not %d", fuse, n)
		}
		c.dev.ops = ReduceScatterPlan(srcs, dsts)
	case coll.Bcast:
		c.dev.ops = BcastPlan(srcs, dsts, c.cfg.Root, fuse)
	}
	c.dev.run.Begin(d.Local, c.dev.ops, c.token(kindWork, 0, false), c.cfg.Dtype, c.cfg.Op)
	return nil
}

func (d *Device) open1(c *Call, peer int, k bufferKey) (exec.Region, error) {
	r, err := d.Mapper.Map(peer, k.key, k.off, k.len, c.cfg.Dst.Mem())
	if err != nil {
		return r, fmt.Errorf("mapping rank %d's buffer: %w", peer, err)
	}
	c.dev.mapped = append(c.dev.mapped, mappedKey{peer, k.key})
	return r, nil
}

func (d *Device) release(c *Call) {
	for _, m := range c.dev.mapped {
		d.Mapper.Release(m.peer, m.key)
	}
	c.dev.mapped = c.dev.mapped[:0]
}

// work starts the ops that may run: all of them on an in-order executor
// (one stream), else those whose dependencies have finished.
func (d *Device) work(c *Call) (moved, done bool, err error) {
	if c.dev.run.Done() {
		return true, true, nil
	}
	started, err := c.dev.run.Start()
	return started, c.dev.run.Done(), err
}

func (d *Device) poll(c *Call, now time.Time, wait *time.Time) (bool, error) {
	return c.dev.run.Poll(now, wait)
}

func (d *Device) ownsToken(c *Call, tok uint64) bool { return c.dev.run.Mine(tok) }

func (d *Device) step(c *Call, comp exec.Completion) error { return c.dev.run.Step(comp) }

// stop cancels the ops still on the device (the executor's Cancel waits
// until they no longer touch any buffer) and releases the mappings.
func (d *Device) stop(c *Call) []error {
	errs := c.dev.run.Cancel()
	d.release(c)
	return errs
}
