package team

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The runtime kept awake between collectives (docs/ucc.md "Where the time
// after a pause goes").
//
// Every call of this layer enters Go on a thread that C owns (the MPI
// rank's). While that thread computes in C, the runtime's monitor thread
// (sysmon) takes its P back: the P's scheduler tick never moves, because a
// callback from C runs without passing through the scheduler, so sysmon
// counts it as one goroutine running for more than 10 ms. Once every P is
// idle, sysmon itself goes to sleep on a note, and the next entry into Go
// must wake it (a futex wake, 7-20 µs on the 2-core test machine, against
// 0.1 µs for an entry while the runtime is awake).
//
// The keeper holds one P without a core: a goroutine that sleeps in a raw
// nanosleep system call, during which its P stays its own (the runtime
// retakes a P in a system call only after 10 ms when other Ps are idle),
// and passes through the scheduler between sleeps (so its P's tick moves
// and sysmon does not retake it as a long runner). So one P is never
// idle, sysmon never sleeps on its note, and an entry from C takes an idle
// P without waking anybody. It needs GOMAXPROCS of at least 2 (the
// keeper's P and the caller's), which keepAwake raises it to: under
// mpirun's binding to one core GOMAXPROCS is 1.
//
// What it costs, and why it is off unless asked for
// (UCC_TL_GORING_KEEPAWAKE=5ms): the keeper's wake-up per interval (200 a
// second at 5 ms) is the small part. sysmon no longer sleeps while the
// caller's thread is in C: it still retakes the caller's P (whose tick
// never moves), and each retake sets it polling every 20 µs before it
// backs off, about 4000 wake-ups a second and 6% of a core at 5 ms between
// collectives, 18% at 0.5 ms, in the probe below. A GPU node with a rank
// per GPU has such a core to spare; a fully subscribed node does not, and
// there it would be taken from the application to save 10-15 µs per
// collective. Even so it works only while collectives come:
// keeperIdleAfter without a call to collectiveStarts and it parks, sysmon
// sleeps as before, and the next collective wakes it (that call pays the
// wake-up the keeper exists to avoid, once per idle period).
//
// experiments/gowake/run.sh measures the first entry after 5 ms in C: 9-13 µs
// without a keeper, 0.85-1.7 µs with it (KEEPER=5ms; three runs,
// 2026-11-25).

// keeperMaxInterval is where the keeper stops working: a P in a system
// call for 10 ms is retaken even when other Ps are idle.
const keeperMaxInterval = 9 * time.Millisecond

// defaultKeepAwake is the keeper's interval unless UCC_TL_GORING_KEEPAWAKE
// says otherwise: off (see above for what it would cost).
const defaultKeepAwake = 0

// keeperIdleAfter is how long the keeper keeps the runtime awake after
// the last collective started.
const keeperIdleAfter = 100 * time.Millisecond

// keeper is the process's one keeper, shared by every context that wants
// it (the first one's interval wins).
var keeper = struct {
	mu    sync.Mutex
	users int
	stop  chan struct{}
	done  chan struct{}

	on     atomic.Bool   // users > 0: collectiveStarts has something to tell
	last   atomic.Int64  // when the last collective started, UnixNano
	parked atomic.Bool   // the keeper waits on wake
	wake   chan struct{} // capacity 1; made once, so collectiveStarts reads it without the lock
}{wake: make(chan struct{}, 1)}

// CollectiveStarts tells the keeper a collective starts: it stays awake
// for keeperIdleAfter more, and wakes if it parked. Without a keeper (the
// default) it costs one atomic load.
func CollectiveStarts() {
	if !keeper.on.Load() {
		return
	}
	keeper.last.Store(time.Now().UnixNano())
	if keeper.parked.Load() {
		select {
		case keeper.wake <- struct{}{}:
		default:
		}
	}
}

// keepAwake starts the keeper for one more user; the returned function
// (call it once) drops that user, and the last one stops the keeper and
// waits for its goroutine to end. An interval of 0 does nothing.
func keepAwake(every time.Duration) (release func()) {
	if every <= 0 {
		return func() {}
	}
	keeper.mu.Lock()
	defer keeper.mu.Unlock()
	if keeper.users == 0 {
		if runtime.GOMAXPROCS(0) < 2 {
			runtime.GOMAXPROCS(2)
		}
		keeper.stop, keeper.done = make(chan struct{}), make(chan struct{})
		keeper.last.Store(time.Now().UnixNano())
		keeper.on.Store(true)
		go keep(every, keeper.stop, keeper.done, keeper.wake)
	}
	keeper.users++
	var once sync.Once
	return func() { once.Do(dropKeeper) }
}

func dropKeeper() {
	keeper.mu.Lock()
	defer keeper.mu.Unlock()
	if keeper.users--; keeper.users == 0 {
		keeper.on.Store(false)
		close(keeper.stop)
		<-keeper.done
	}
}

// keep is the keeper's loop: a blocking system call (not time.Sleep, which
// parks the goroutine and idles its P), then the scheduler; parked on wake
// once no collective started for keeperIdleAfter.
func keep(every time.Duration, stop <-chan struct{}, done chan<- struct{}, wake <-chan struct{}) {
	defer close(done)
	ts := syscall.NsecToTimespec(int64(every))
	for {
		select {
		case <-stop:
			return
		default:
		}
		if idle() {
			// Parked first, idle checked again: a collective that started
			// in between either saw parked and sends on wake, or set last
			// before this second look.
			keeper.parked.Store(true)
			if idle() {
				select {
				case <-stop:
					keeper.parked.Store(false)
					return
				case <-wake:
				}
			}
			keeper.parked.Store(false)
		}
		rest := ts
		for syscall.Nanosleep(&rest, &rest) == syscall.EINTR {
		}
		runtime.Gosched()
	}
}

func idle() bool { return time.Now().UnixNano()-keeper.last.Load() > int64(keeperIdleAfter) }

// keeperParked reports whether the keeper waits for a collective (tests).
func keeperParked() bool { return keeper.parked.Load() }

// keeperRunning reports whether the keeper's goroutine runs (tests).
func keeperRunning() bool {
	keeper.mu.Lock()
	defer keeper.mu.Unlock()
	return keeper.users > 0
}
