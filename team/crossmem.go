package team

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/crossread"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/tune"
)

// Reading the peers' memory (option crossmem, UCC_TL_GORING_CROSSMEM): a
// host allreduce or allgather of a team whose ranks all run on this host
// runs on package direct's host backend (each rank reads what it needs
// straight out of its peers' buffers, its part split over threads) instead
// of as sched's messages. The team's first such call checks that the
// kernel lets the ranks read each other; where it does not, every rank
// gets direct.ErrUnreadable alike with nothing written, turns the team's
// cross-memory reads off, and runs that call and all later ones as
// messages (directRunner, direct.go).

// Card modes of the crossmem setting.
const (
	crossCardOff    = 0
	crossCardAuto   = 1
	crossCardForced = 2
)

// crossSetting is what this rank's card says of crossmem: off, forced
// with the option's threads, or auto with the rank's CPUs shared among
// its host's ranks (tune.CrossThreads; none where the host has more ranks
// than CPUs).
func crossSetting(ctx *Context) crossCard {
	switch o := ctx.opts.crossmem; o {
	case crossmemOff:
		return crossCard{}
	case crossmemAuto:
		return crossCard{mode: crossCardAuto, threads: uint8(tune.CrossThreads(runtime.NumCPU(), localRanks(), hostCPUs()))}
	default:
		return crossCard{mode: crossCardForced, threads: uint8(o)}
	}
}

// hostCPUs is the number of CPUs this host has online (0 where Linux does
// not say): the ranks' affinity masks tell what each may run on, not how
// many CPUs the host's ranks share. Read once per process: every team's
// card asks.
var hostCPUs = sync.OnceValue(func() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	n, err := tune.CountCPUList(string(b))
	if err != nil {
		return 0
	}
	return n
})

// crossAgreement is what the cards of a team on one host decide: whether
// its calls may run by cross-memory reads (every rank in the same mode,
// not off) and the threads auto decides by (the fewest any rank has; a
// rank's own threads only split its own part). Ranks that said otherwise
// would pick different calls and wait for each other forever.
func crossAgreement(all []card) (on bool, decide int) {
	if len(all) < 2 || all[0].cross.mode == crossCardOff {
		return false, 0
	}
	decide = int(all[0].cross.threads)
	for _, c := range all[1:] {
		if c.cross.mode != all[0].cross.mode {
			return false, 0
		}
		decide = min(decide, int(c.cross.threads))
	}
	return decide > 0, decide
}

// openCrossmem gives a team on one host its crossmem state when every
// rank's card asks for it alike.
func (t *Team) openCrossmem(all []card) {
	on, decide := crossAgreement(all)
	if !on || !t.oneHost {
		return
	}
	own := all[t.rank].cross // this rank's own card: its threads split its parts
	t.cross, t.crossDecide = direct.NewHost(&crossread.CrossReader{}, int(own.threads), rand.Uint64()), decide
}

// runsCrossmem reports whether a call of B bytes (UCC's meaning: an
// allgather's block) on mem runs by cross-memory reads: host memory, no
// algorithm named for it, above the C path's sizes, and with auto where
// tune.CrossCall says it pays.
func (t *Team) runsCrossmem(a Args, mem exec.Mem, B int64) bool {
	if t.cross == nil || t.crossOff || !mem.IsHost() || !direct.HostServes(a.Coll) || a.Alg != "" || t.ctx.opts.chosen[a.Coll] || B <= t.ctx.opts.cpathMax {
		return false
	}
	return t.ctx.opts.crossmem != crossmemAuto || tune.CrossCall(a.Coll, t.size, t.crossDecide, B)
}

// newCrossRunner prepares a call by cross-memory reads: B is an
// allreduce's vector or an allgather's block. In place, an allreduce's
// source is its result and an allgather's the rank's block of its result
// (UCC's meaning).
func newCrossRunner(k *Call) (Runner, error) {
	c, a, B := k.coll, k.Args, k.bytes
	t := c.team
	if a.Dst == nil || (!a.InPlace && a.Src == nil) {
		return nil, Invalid("%s: missing buffer", a.Coll)
	}
	dstLen := B
	if a.Coll == coll.Allgather {
		dstLen = int64(t.size) * B
	}
	view := func(p unsafe.Pointer, n int64) exec.Region { return c.view(exec.Host, p, n) }
	src, dst := place(a, t.rank, B, B, dstLen, view)
	dtype, op := a.Coll.Reduction(a.Dtype, a.Op)
	if !a.Coll.Reduces() {
		dtype = coll.Uint8 // an allgather moves bytes
	}
	c.alg = "crossmem"
	return &directRunner{c: c, call: t.directCall(), cfg: direct.Config{Collective: a.Coll, Rank: t.rank, Size: t.size, Src: src, Dst: dst,
		Dtype: dtype, Op: op, Host: t.cross}}, nil
}

// reportDirect prints where the team's calls on package direct's engine
// spent their time, per call, to stderr when GORING_DIRECT_STATS is set
// (a diagnostic: docs/ucc.md "Reading the peers' memory", docs/gpu.md
// "The leader's speed"): the cross-memory reads on the host, the leader
// on a shared GPU.
func (t *Team) reportDirect() {
	if os.Getenv("GORING_DIRECT_STATS") == "" {
		return
	}
	if t.cross != nil {
		printDirectStats("crossmem", t.rank, t.size, t.cross.Stats())
	}
	printDirectStats("leader", t.rank, t.size, t.leaderStats)
}

func printDirectStats(what string, rank, size int, s direct.Stats) {
	if s.Calls == 0 {
		return
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(s.Calls) }
	fmt.Fprintf(os.Stderr, "goring %s: rank %d of %d, %d calls, us per call: arrive %.1f verdict %.1f work %.1f done %.1f\n",
		what, rank, size, s.Calls, per(s.Arrive), per(s.Verdict), per(s.Work), per(s.Done))
}
