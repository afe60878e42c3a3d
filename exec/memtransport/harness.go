package memtransport

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// RunOptions configure a Job.
type RunOptions struct {
	Options
	// Timeout bounds each call (per rank); 0 means 20 s.
	Timeout time.Duration
	// Stall lists ranks that never run: their peers must fail within
	// Timeout, naming what they waited on (failure tests).
	Stall []int
	// Device, when set, puts every rank's buffers (src, dst, scratch) in
	// its memory: inputs are written and outputs read through it, copies
	// and reductions run on its executors, transfers go through its Copy
	// (it is the network's Memory). Rank r's memory is device r % Devices.
	Device  Device
	Devices int
}

// Device is device memory for a Job (package exec/fakedev's Arena; a GPU
// adapter could be one too).
type Device interface {
	Memory
	Alloc(dev int, n int64) exec.Region
	Write(dst exec.Region, b []byte) error
	Read(src exec.Region) ([]byte, error)
	// NewLocal returns the copy/reduce executor of one rank.
	NewLocal() exec.LocalExecutor
}

// Job runs every rank of a plan in its own goroutine over one Network. The
// goroutines, machines and buffers live as long as the Job, so repeated
// calls allocate nothing once warm (see the executor benchmark).
type Job struct {
	plan     *sched.Plan
	net      *Network
	machines []*exec.Machine
	bufs     []exec.Buffers
	opts     RunOptions
	start    []chan struct{}
	done     chan rankResult
	stalled  []bool
	errs     []error
}

type rankResult struct {
	rank int
	err  error
}

// RunPlan runs plan once over an in-memory network with default options
// (rendezvous, no delays) and returns every rank's dst buffer. inputs[r] is
// rank r's src buffer and must have the program's src size.
func RunPlan(plan *sched.Plan, dtype coll.Dtype, op coll.Op, inputs [][]byte) ([][]byte, error) {
	return RunPlanWith(plan, dtype, op, inputs, RunOptions{})
}

// RunPlanWith is RunPlan with options.
func RunPlanWith(plan *sched.Plan, dtype coll.Dtype, op coll.Op, inputs [][]byte, opts RunOptions) ([][]byte, error) {
	j, err := NewJob(plan, dtype, op, inputs, opts)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	if err := j.Call(); err != nil {
		return nil, err
	}
	return j.Outputs(), nil
}

// NewJob validates the plan against the inputs, builds a Machine per rank
// (dst filled with 0xA5 so unwritten bytes show) and starts the rank
// goroutines. Close stops them.
func NewJob(plan *sched.Plan, dtype coll.Dtype, op coll.Op, inputs [][]byte, opts RunOptions) (*Job, error) {
	n := plan.NRanks
	if len(plan.Ranks) != n {
		return nil, fmt.Errorf("memtransport: plan has %d programs for %d ranks", len(plan.Ranks), n)
	}
	if len(inputs) != n {
		return nil, fmt.Errorf("memtransport: %d inputs for %d ranks", len(inputs), n)
	}
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	if opts.Device != nil {
		opts.Options.Memory = opts.Device
		opts.Devices = max(opts.Devices, 1)
	}
	j := &Job{plan: plan, net: New(n, opts.Options), opts: opts, done: make(chan rankResult, n),
		stalled: make([]bool, n), errs: make([]error, n)}
	for _, r := range opts.Stall {
		if r < 0 || r >= n {
			return nil, fmt.Errorf("memtransport: stalled rank %d is not in [0, %d)", r, n)
		}
		j.stalled[r] = true
	}
	cfg := exec.ConfigFor(plan, dtype, op)
	for r := 0; r < n; r++ {
		prog := &plan.Ranks[r]
		if int64(len(inputs[r])) != prog.Sizes.Src {
			return nil, fmt.Errorf("memtransport: rank %d input has %d bytes, the program's src is %d", r, len(inputs[r]), prog.Sizes.Src)
		}
		b, rcfg, err := j.buffers(r, prog.Sizes, inputs[r], cfg)
		if err != nil {
			return nil, err
		}
		m, err := exec.New(prog, b, rcfg)
		if err != nil {
			return nil, err
		}
		j.machines = append(j.machines, m)
		j.bufs = append(j.bufs, m.Buffers())
	}
	for r := 0; r < n; r++ {
		ch := make(chan struct{})
		j.start = append(j.start, ch)
		go j.rank(r, ch)
	}
	return j, nil
}

// buffers makes rank r's buffers: src holding input, dst filled with 0xA5,
// on the host or on the Job's device.
func (j *Job) buffers(r int, z sched.Sizes, input []byte, cfg exec.Config) (exec.Buffers, exec.Config, error) {
	dst := make([]byte, z.Dst)
	for i := range dst {
		dst[i] = 0xA5
	}
	d := j.opts.Device
	if d == nil {
		b := exec.HostBuffers(aligned(z.Src), aligned(z.Dst), nil)
		copy(b.Src.Bytes(), input)
		copy(b.Dst.Bytes(), dst)
		return b, cfg, nil
	}
	dev := r % j.opts.Devices
	b := exec.Buffers{Src: d.Alloc(dev, z.Src), Dst: d.Alloc(dev, z.Dst), Scratch: d.Alloc(dev, z.Scratch)}
	if err := d.Write(b.Src, input); err != nil {
		return b, cfg, err
	}
	if err := d.Write(b.Dst, dst); err != nil {
		return b, cfg, err
	}
	cfg.Local = d.NewLocal()
	return b, cfg, nil
}

func aligned(n int64) []byte {
	w := make([]uint64, (n+7)/8)
	if len(w) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)[:n]
}

// rank is rank r's goroutine: one exec.Run per start signal. The first
// rank to fail aborts the network, so every other rank fails promptly
// instead of waiting for its own deadline.
func (j *Job) rank(r int, start chan struct{}) {
	for range start {
		var err error
		if !j.stalled[r] {
			err = exec.Run(context.Background(), j.machines[r], j.net.Endpoint(r), time.Now().Add(j.opts.Timeout))
			if err != nil {
				j.net.Abort(fmt.Errorf("job aborted: rank %d failed", r))
			}
		}
		j.done <- rankResult{r, err}
	}
}

// Call runs the collective once on every rank and waits for all of them.
// Its error joins every rank's error, in rank order; the first failing
// rank's error comes with the step it waited on, the others name the
// abort.
func (j *Job) Call() error {
	j.net.Reset()
	for _, ch := range j.start {
		ch <- struct{}{}
	}
	failed := false
	for range j.start {
		res := <-j.done
		j.errs[res.rank] = res.err
		failed = failed || res.err != nil
	}
	if !failed {
		if p := j.net.Pending(); p != 0 {
			return fmt.Errorf("memtransport: %s/%s finished with %d unmatched operations", j.plan.Collective, j.plan.Algorithm, p)
		}
		return nil
	}
	return errors.Join(j.errs...)
}

// Outputs returns every rank's dst buffer: the Job's own host memory, or
// a copy read from the device.
func (j *Job) Outputs() [][]byte {
	out := make([][]byte, len(j.bufs))
	for r := range j.bufs {
		if dst := j.bufs[r].Dst; dst.IsHost() {
			out[r] = dst.Bytes()
		} else {
			b, err := j.opts.Device.Read(dst)
			if err != nil {
				panic(err) // the Job allocated it: a broken device
			}
			out[r] = b
		}
	}
	return out
}

// Machine returns rank r's executor.
func (j *Job) Machine(r int) *exec.Machine { return j.machines[r] }

// Network returns the Job's network.
func (j *Job) Network() *Network { return j.net }

// Close stops the rank goroutines.
func (j *Job) Close() {
	for _, ch := range j.start {
		close(ch)
	}
	j.start = nil
}
