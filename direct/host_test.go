package direct

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/exec/reduce"
)

// space is the processes of a test: each rank's buffers registered under
// a process id of its own, so that a read names the process as
// process_vm_readv does, and a read outside what a process registered
// fails as a fault would.
type space struct {
	mu      sync.Mutex
	regions map[int64][][]byte
	refuse  map[[2]int64]bool // (reader, target): the kernel refuses
	alias   map[int64]int64   // a process id that names another process here
	failAt  int               // the read that fails (0: none), counted from 1
	reads   int
	// failPid's reads all fail; slow's reads take that long each; ended
	// holds the processes whose call has returned, and late what touched
	// one of them after that (TestFailedCallWaitsForWorkingPeers).
	failPid int64
	slow    map[int64]time.Duration
	ended   map[int64]bool
	late    []string
}

func newSpace() *space {
	return &space{regions: map[int64][][]byte{}, refuse: map[[2]int64]bool{}, alias: map[int64]int64{}}
}

func (s *space) register(pid int64, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.regions[pid] = append(s.regions[pid], b)
}

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// noteLate records an access of process pid by process by after pid's
// call returned (s.mu held).
func (s *space) noteLate(what string, by, pid int64) {
	if pid != 0 && pid != by && s.ended[pid] {
		s.late = append(s.late, fmt.Sprintf("process %d: %s of process %d after its call returned", by, what, pid))
	}
}

// find is the n bytes at addr of process pid.
func (s *space) find(pid int64, addr uint64, n int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.regions[pid] {
		base := addrOf(b)
		if addr >= base && addr+uint64(n) <= base+uint64(len(b)) {
			return b[addr-base : addr-base+uint64(n)], nil
		}
	}
	return nil, syscall.EFAULT
}

// reader is one process's view.
type reader struct {
	s   *space
	pid int64
}

func (r reader) Pid() int64 { return r.pid }

func (r reader) Read(dst []byte, pid int64, addr uint64) error {
	r.s.mu.Lock()
	delay := r.s.slow[r.pid]
	r.s.mu.Unlock()
	time.Sleep(delay)
	r.s.mu.Lock()
	refused := r.s.refuse[[2]int64{r.pid, pid}]
	if a, ok := r.s.alias[pid]; ok {
		pid = a
	}
	r.s.reads++
	failed := r.s.failAt > 0 && r.s.reads == r.s.failAt || r.s.failPid != 0 && r.s.failPid == r.pid
	r.s.noteLate("read", r.pid, pid)
	r.s.mu.Unlock()
	if refused {
		return syscall.EPERM
	}
	if failed {
		return syscall.ESRCH
	}
	if pid == 0 {
		pid = r.pid
	}
	src, err := r.s.find(pid, addr, len(dst))
	if err != nil {
		return err
	}
	copy(dst, src)
	return nil
}

// piece is the fake's reduction piece: small, so that jobs span several.
const piece = 12 << 10

// Run does the jobs on up to threads goroutines, as the C workers do.
func (r reader) Run(jobs []Job, threads int, d coll.Dtype, o coll.Op) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		errs []error
	)
	for w := 0; w < max(1, min(threads, len(jobs))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acc, in := make([]byte, piece), make([]byte, piece)
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(jobs) {
					return
				}
				if err := r.job(jobs[i], d, o, acc, in); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r reader) job(j Job, d coll.Dtype, o coll.Op, acc, in []byte) error {
	if len(j.Srcs) == 1 && len(j.Outs) == 0 {
		return r.Read(j.Dst, j.Srcs[0].Pid, j.Srcs[0].Addr)
	}
	for off := 0; off < len(j.Dst); off += len(acc) {
		m := min(len(acc), len(j.Dst)-off)
		if err := r.Read(acc[:m], j.Srcs[0].Pid, j.Srcs[0].Addr+uint64(off)); err != nil {
			return err
		}
		for _, op := range j.Srcs[1:] {
			if err := r.Read(in[:m], op.Pid, op.Addr+uint64(off)); err != nil {
				return err
			}
			if err := reduce.Into(d, o, acc[:m], in[:m]); err != nil {
				return err
			}
		}
		copy(j.Dst[off:off+m], acc[:m])
		for _, out := range j.Outs {
			if err := r.write(out.Pid, out.Addr+uint64(off), acc[:m]); err != nil {
				return err
			}
		}
	}
	return nil
}

// write copies src into addr of process pid, as process_vm_writev.
func (r reader) write(pid int64, addr uint64, src []byte) error {
	r.s.mu.Lock()
	refused := r.s.refuse[[2]int64{r.pid, pid}]
	r.s.noteLate("write", r.pid, pid)
	r.s.mu.Unlock()
	if refused {
		return syscall.EPERM
	}
	dst, err := r.s.find(pid, addr, len(src))
	if err != nil {
		return err
	}
	copy(dst, src)
	return nil
}

// hostJob is P ranks of a team, each its own process in s.
type hostJob struct {
	s        *space
	net      *memtransport.Network
	teams    []*Host
	src, dst [][]byte
}

func newHostJob(p, threads int, seed uint64) *hostJob {
	j := &hostJob{s: newSpace(), net: memtransport.New(p, memtransport.Options{Seed: seed, Reorder: true, MaxDelay: 20 * time.Microsecond})}
	for r := 0; r < p; r++ {
		t := NewHost(reader{j.s, int64(100 + r)}, threads, rand.Uint64())
		j.s.register(int64(100+r), unsafe.Slice((*byte)(unsafe.Pointer(t.cookie)), 8))
		j.teams = append(j.teams, t)
	}
	return j
}

// buffers gives every rank new buffers for c: B bytes a rank's vector or
// block, random contents, registered in its process.
func (j *hostJob) buffers(c coll.Collective, B int64, inPlace bool, rng *rand.Rand) {
	p := len(j.teams)
	j.src, j.dst = make([][]byte, p), make([][]byte, p)
	for r := 0; r < p; r++ {
		n := B
		if c == coll.Allgather {
			n = int64(p) * B
		}
		j.dst[r] = make([]byte, n)
		for i := range j.dst[r] {
			j.dst[r][i] = byte(rng.Uint32())
		}
		j.src[r] = make([]byte, B)
		for i := range j.src[r] {
			j.src[r][i] = byte(rng.Uint32()) & 0x3f // small values: sums of int8 stay exact either way
		}
		switch {
		case inPlace && c == coll.Allgather:
			copy(j.dst[r][int64(r)*B:], j.src[r])
			j.src[r] = j.dst[r][int64(r)*B : int64(r+1)*B]
		case inPlace:
			copy(j.dst[r], j.src[r])
			j.src[r] = j.dst[r]
		default:
			j.s.register(int64(100+r), j.src[r])
		}
		j.s.register(int64(100+r), j.dst[r])
	}
}

// run calls every rank's Call in its own goroutine, as the processes do.
func (j *hostJob) run(c coll.Collective, dt coll.Dtype, op coll.Op) []error {
	p := len(j.teams)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r := 0; r < p; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer j.markEnded(r)
			var call Call
			cfg := Config{Collective: c, Rank: r, Size: p, Src: exec.HostRegion(j.src[r]), Dst: exec.HostRegion(j.dst[r]),
				Dtype: dt, Op: op, Transport: j.net.Endpoint(r), Host: j.teams[r], Deadline: time.Now().Add(20 * time.Second)}
			if errs[r] = call.Begin(cfg); errs[r] != nil {
				return
			}
			for {
				done, err := call.Progress(time.Now().Add(10 * time.Millisecond))
				if err != nil || done {
					errs[r] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errs
}

// markEnded records that rank r's call returned, where the fake process
// memory keeps such a record (its ended map: a read or write of the rank's
// buffers after this is a use after the call).
func (j *hostJob) markEnded(r int) {
	j.s.mu.Lock()
	defer j.s.mu.Unlock()
	if j.s.ended != nil {
		j.s.ended[int64(100+r)] = true
	}
}

// want is what every rank's result must be: the allgather of the sources,
// or their reduction in the algorithm's order.
func (j *hostJob) want(t *testing.T, c coll.Collective, dt coll.Dtype, op coll.Op) []byte {
	if c == coll.Allgather {
		var all []byte
		for _, s := range j.src {
			all = append(all, s...)
		}
		return all
	}
	// Block q is rank q's operand, then the others' in rank order
	// (allreduce.go).
	p := len(j.src)
	n := len(j.src[0])
	esize := dt.Size()
	acc := make([]byte, n)
	for q := 0; q < p; q++ {
		lo, hi := (n/esize)*q/p*esize, (n/esize)*(q+1)/p*esize
		blk := acc[lo:hi]
		copy(blk, j.src[q][lo:hi])
		for r := 0; r < p; r++ {
			if r != q {
				require.NoError(t, reduce.Into(dt, op, blk, j.src[r][lo:hi]))
			}
		}
	}
	return acc
}

func TestCollectivesContents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := []struct {
		dt coll.Dtype
		op coll.Op
	}{{coll.Float32, coll.Sum}, {coll.Int32, coll.Max}, {coll.Int8, coll.Sum}, {coll.Float64, coll.Prod}}
	for _, c := range []coll.Collective{coll.Allreduce, coll.Allgather} {
		for _, p := range []int{2, 3, 4, 5} {
			for _, threads := range []int{1, 3} {
				for _, inPlace := range []bool{false, true} {
					for i, ty := range types {
						// From fewer elements than ranks to several pieces a thread.
						elems := []int64{1, 3, 1001, 3*MinPart/2 + 7}[i]
						B := elems * int64(ty.dt.Size())
						name := fmt.Sprintf("%s/P%d/T%d/inplace=%v/%v-%v/%dB", c, p, threads, inPlace, ty.dt, ty.op, B)
						t.Run(name, func(t *testing.T) {
							j := newHostJob(p, threads, rng.Uint64())
							for call := 0; call < 2; call++ { // the first with the verdict, the second without
								j.buffers(c, B, inPlace, rng)
								want := j.want(t, c, ty.dt, ty.op)
								for r, err := range j.run(c, ty.dt, ty.op) {
									require.NoError(t, err, "call %d rank %d", call, r)
									assert.Equal(t, want, j.dst[r], "call %d rank %d", call, r)
									assert.True(t, j.teams[r].Verified())
								}
							}
						})
					}
				}
			}
		}
	}
}

func TestUnreadableFallsBackAlike(t *testing.T) {
	for _, c := range []coll.Collective{coll.Allreduce, coll.Allgather} {
		for _, how := range []string{"refused", "other namespace"} {
			t.Run(fmt.Sprintf("%s/%s", c, how), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				j := newHostJob(4, 2, 7)
				if how == "refused" {
					j.s.refuse[[2]int64{102, 101}] = true // rank 2 cannot read rank 1
				} else {
					j.s.alias[103] = 100 // rank 3's id names rank 0's process
				}
				j.buffers(c, 4096, true, rng)
				before := make([][]byte, len(j.dst))
				for r, d := range j.dst {
					before[r] = append([]byte(nil), d...)
				}
				for r, err := range j.run(c, coll.Float32, coll.Sum) {
					require.Error(t, err, "rank %d", r)
					assert.ErrorIs(t, err, ErrUnreadable, "rank %d", r)
					assert.Equal(t, before[r], j.dst[r], "rank %d: nothing written", r)
					assert.False(t, j.teams[r].Verified())
				}
			})
		}
	}
}

func TestDisagreeingRanksFail(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	j := newHostJob(3, 2, 9)
	j.buffers(coll.Allreduce, 4096, false, rng)
	j.src[2], j.dst[2] = j.src[2][:2048], j.dst[2][:2048]
	for r, err := range j.run(coll.Allreduce, coll.Float32, coll.Sum) {
		require.Error(t, err, "rank %d", r)
		assert.NotErrorIs(t, err, ErrUnreadable)
		assert.Contains(t, err.Error(), "disagree")
	}
}

// A read failing after the team verified (a peer gone, a buffer freed)
// fails the call on every rank, and none waits for the one that failed.
func TestFailedReadFailsEveryRank(t *testing.T) {
	for _, c := range []coll.Collective{coll.Allreduce, coll.Allgather} {
		for _, at := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("%s/read%d", c, at), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(at), 8))
				j := newHostJob(4, 2, uint64(at))
				j.buffers(c, 1<<16, false, rng)
				for _, err := range j.run(c, coll.Float32, coll.Sum) {
					require.NoError(t, err)
				}
				j.s.mu.Lock()
				j.s.failAt, j.s.reads = at, 0
				j.s.mu.Unlock()
				j.buffers(c, 1<<16, false, rng)
				failed := 0
				for _, err := range j.run(c, coll.Float32, coll.Sum) {
					if err != nil {
						failed++
						assert.Contains(t, err.Error(), "rank")
						assert.NotErrorIs(t, err, exec.ErrDeadline, "a rank waited for the failed one")
					}
				}
				assert.Equal(t, 4, failed, "every rank fails")
			})
		}
	}
}

func TestParts(t *testing.T) {
	for _, tc := range []struct {
		n       int64
		esize   int
		threads int
		want    []int64
	}{
		{8, 4, 4, []int64{8}},
		{4 * MinPart, 4, 2, []int64{2 * MinPart, 4 * MinPart}},
		{3*MinPart + 12, 4, 4, []int64{MinPart + 4, 2*MinPart + 8, 3*MinPart + 12}},
	} {
		assert.Equal(t, tc.want, parts(tc.n, tc.esize, tc.threads), "%+v", tc)
	}
}

func TestBeginRefusesBadInput(t *testing.T) {
	j := newHostJob(2, 1, 1)
	b := exec.HostRegion(make([]byte, 8))
	for _, cfg := range []Config{
		{Collective: coll.Bcast, Size: 2, Src: b, Dst: b, Dtype: coll.Float32, Host: j.teams[0]},
		{Collective: coll.Allreduce, Rank: 2, Size: 2, Src: b, Dst: b, Dtype: coll.Float32, Host: j.teams[0]},
		{Collective: coll.Allreduce, Size: 2, Src: b, Dst: b, Dtype: coll.Float32},
		{Collective: coll.Allreduce, Size: 2, Src: b, Dst: exec.HostRegion(make([]byte, 6)), Dtype: coll.Float32, Host: j.teams[0]},
		// Buffers of lengths the collective does not give them: the reads
		// would run past the peers' sources (an allreduce's vector is
		// Dst's length), or past this rank's result (an allgather's
		// blocks are Src's length).
		{Collective: coll.Allreduce, Size: 2, Src: b, Dst: exec.HostRegion(make([]byte, 16)), Dtype: coll.Float32, Host: j.teams[0]},
		{Collective: coll.Allgather, Size: 2, Src: b, Dst: b, Dtype: coll.Uint8, Host: j.teams[0]},
		{Collective: coll.Allgather, Size: 2, Src: b, Dst: exec.HostRegion(make([]byte, 24)), Dtype: coll.Uint8, Host: j.teams[0]},
	} {
		var c Call
		cfg.Transport = j.net.Endpoint(0)
		assert.Error(t, c.Begin(cfg), "%+v", cfg)
	}
}
