package nodeexec

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// Resident kernels (devsync/resident.go): a small call on the team's own
// stream is handed to the kernel of the call before it, still on the
// GPU, instead of launched. On two H200s a call's launch took 4-6 µs of
// the host's time and its kernel began some µs later still, out of 16-23
// µs a call of 16 KiB through UCC; a doorbell in host-mapped memory costs
// the host a few stores, and the kernel sees it after one load over PCIe.

// DefaultLinger is how long a resident kernel waits for the team's next
// call. Calls of a loop follow each other within microseconds; work
// that waits for the whole device (a device synchronisation, a free)
// waits for a lingering kernel this long at most.
const DefaultLinger = 50 * time.Microsecond

// residentMaxBlocks is the largest grid that stays resident: its CTAs
// keep their SMs while they wait (16 of an H200's 132 at most), and a
// call that needs more is large enough for its launch not to matter.
const residentMaxBlocks = 16

// parkedWaitMax bounds the host's wait for a parked kernel's final word,
// which it stores a load over PCIe after its parked word: only a device
// that stopped running kernels leaves it unset this long.
const parkedWaitMax = time.Second

// residentKernel is the kernel that may take the team's next call.
type residentKernel struct {
	live  bool
	key   residentKey
	epoch devsync.Epoch // its last call's
}

// residentKey is what a resident kernel runs: its function and grid.
type residentKey struct {
	alg    devsync.Algorithm
	dtype  coll.Dtype
	op     coll.Op
	blocks int
}

// ring is the team's ring as the host sees it (devsync.Words).
type ring []atomic.Uint64

func (r ring) Load(i int) uint64     { return r[i].Load() }
func (r ring) Store(i int, v uint64) { r[i].Store(v) }

// SetLinger sets how long a resident kernel waits for the next call
// (DefaultLinger unless set); 0 launches every call.
func (l *Local) SetLinger(d time.Duration) { l.linger = max(d, 0) }

// Handed is how many calls were handed to a resident kernel, not
// launched (a diagnostic).
func (l *Local) Handed() int { return l.handed }

// lingerAfter is how long the kernel of a call beginning now waits for
// the next: the linger where this call came within it of the last one's
// end (calls back to back), else none: a kernel waiting through a
// caller's work between calls would only hold its SMs. And none for a
// while after a kernel waited in vain (backOff): a caller's synchronous
// copy from pageable memory waits for a lingering kernel to leave (5 ms
// for a 4 KiB copy beside a kernel lingering 5 ms, on two H200s), so a
// caller that copies between calls would otherwise wait a linger a call.
func (l *Local) lingerAfter(now time.Time) time.Duration {
	if l.linger <= 0 || l.shared || l.lastEnd.IsZero() || now.Sub(l.lastEnd) > l.linger {
		return 0
	}
	if l.skip > 0 {
		l.skip--
		return 0
	}
	return l.linger
}

// maxBackOff is the most calls launched without a linger after a kernel
// waited in vain: such kernels wait at most one call in this many.
const maxBackOff = 64

// backOff notes a resident kernel that left without another call: the
// next calls, twice as many as after the last such kernel (to
// maxBackOff), launch without a linger. A call handed over resets it.
func (l *Local) backOff() {
	l.backoff = min(2*l.backoff+1, maxBackOff)
	l.skip = l.backoff
}

// start queues this rank's kernel of call nc on stream: handed to the
// resident kernel where that one runs the same function on the same grid
// and took the call before, else launched, resident itself where
// mayReside (the call's only kernel, on the team's own stream) and calls
// come back to back. Any other kernel first tells a resident one to
// leave: it would wait for a call that never comes, and one queued
// behind it on the stream would wait its linger.
func (l *Local) start(stream *cuda.Stream, nc cuda.NodeCall, g cuda.NodeGrid, mayReside bool) error {
	linger := time.Duration(0)
	if mayReside && g.Blocks <= residentMaxBlocks {
		linger = l.lingerAfter(time.Now())
	}
	key := residentKey{alg: nc.Alg, dtype: nc.Dtype, op: nc.Op, blocks: g.Blocks}
	if l.res.live && mayReside && l.res.epoch.Next() == nc.Epoch && (linger == 0 || l.res.key != key) && l.sinceEnd() > l.linger {
		l.backOff() // it waited out its linger for nothing
	}
	if linger > 0 && l.res.live && l.res.key == key && l.res.epoch.Next() == nc.Epoch {
		sh, err := cuda.CheckNodeCall(nc, g) // what a launch would refuse
		if err != nil {
			return err
		}
		rc := devsync.RingCall{In: uint64(nc.In), Out: uint64(nc.Out), Count: uint64(nc.Count), Stride: uint64(sh.BlockStride()),
			Root: uint64(nc.Root), Linger: uint64(linger)}
		took, err := devsync.HandOver(l.ring, l.res.epoch, rc, l.waitParked())
		if err != nil {
			return err
		}
		if took {
			l.res.epoch = nc.Epoch
			l.handed++
			l.backoff = 0
			return nil
		}
		l.res.live = false // it left: launch the call
		l.backOff()
	}
	l.stopResident()
	if linger > 0 {
		nc.Ring, nc.Mailbox, nc.Linger = l.ringPtr, l.mailbox.Ptr(), uint64(linger)
	}
	if err := cuda.NodeLaunchAsync(stream, nc, g); err != nil {
		return err
	}
	if linger > 0 {
		l.res = residentKernel{live: true, key: key, epoch: nc.Epoch}
		l.resided = true
	}
	return nil
}

// sinceEnd is the time since the last call's end was seen.
func (l *Local) sinceEnd() time.Duration { return time.Since(l.lastEnd) }

// stopResident tells the resident kernel, if any, to leave after its
// last call; it does within a few loads of the ring.
func (l *Local) stopResident() {
	if l.res.live {
		l.ring.Store(devsync.RingStop, uint64(l.res.epoch))
		l.res.live = false
	}
}

// waitParked is HandOver's wait for a parked kernel's final word: it
// yields, and fails on a device error or after parkedWaitMax.
func (l *Local) waitParked() func() error {
	began, spins := time.Now(), 0
	return func() error {
		if spins++; spins%errorCheckEvery == 0 {
			if _, err := l.stream.Done(); err != nil {
				return err
			}
			if time.Since(began) > parkedWaitMax {
				return fmt.Errorf("a resident kernel parked after call %d and stored no final word in %v", l.res.epoch, parkedWaitMax)
			}
		}
		runtime.Gosched()
		return nil
	}
}

// retire makes a resident kernel leave and waits until the team's stream
// has nothing left, before Close frees what the kernel reads: nil when
// no resident kernel was ever launched.
func (l *Local) retire() error {
	if !l.resided || l.stream == nil {
		return nil
	}
	l.stopResident()
	l.abort.Store(devsync.AbortWord(l.size)) // also ends one that waits for a peer: the team is closing
	for began := time.Now(); ; time.Sleep(20 * time.Microsecond) {
		idle, err := l.stream.Done()
		if err != nil || idle {
			l.resided = err != nil // gone: a second Close has nothing to wait for
			return err
		}
		if time.Since(began) > parkedWaitMax+l.linger {
			return errors.New("nodeexec: a resident kernel is still on the GPU; its memory is left allocated")
		}
	}
}
