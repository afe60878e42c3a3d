package measure

import (
	"errors"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/model"
)

// GPU paths of goring calibrate (the Multi-path model paper's paths between two GPUs):
//
//   - direct: one peer copy GPU a -> GPU b (cuMemcpyPeerAsync on a's
//     stream; NVLink when the GPUs are linked), timed by events on a;
//   - host: staged through pinned host memory in chunks, each chunk copied
//     down on a's stream and up on b's once its event fires, so the two
//     copies of consecutive chunks overlap (the pipelined staged path of
//     Multi-path model section III), timed by the wall clock around the whole;
//   - together: the direct copy (on a stream of its own on a) and the
//     host-staged path launched at once over one buffer, the host path
//     carrying each --shares share of the largest size in the chunk count
//     the model gives it (calib/together.go), timed by the wall clock
//     until both are done; the share-0 run is the direct copy alone, timed
//     the same way. model.FitContention turns them into the pair's
//     contention entry.
//
// GPU-staged paths (through a third GPU) need three GPUs and are left to
// the multi-path data plane. Pairs measured: GPU 0 to every other GPU.
//
// None of this has run on a GPU yet in this form: the together runs were
// added after the last device session; the pure parts (plan, fit) are
// tested in calib/together_test.go.

// GPUResult is what the GPU measurements add to the document.
type GPUResult struct {
	Paths      []calib.CalibratedPath
	Contention []calib.CalibratedContention
	GPUs       int
	GPUModel   string
	Skipped    []string // reasons, for the document's "skipped" list
}

// AddTo puts r into cal: the machine's GPU count and model, the measured
// paths and contention, and the reasons for what was skipped.
func (r GPUResult) AddTo(cal *calib.Calibration) {
	cal.GPUs, cal.GPUModel = r.GPUs, r.GPUModel
	cal.Paths = append(cal.Paths, r.Paths...)
	cal.Contention = r.Contention
	cal.Skipped = append(cal.Skipped, r.Skipped...)
}

// GPUPaths measures the GPU paths of this machine, or says why not.
func GPUPaths(sizes []int64, chunk int64, iters int, shares []float64) GPUResult {
	const what = "GPU paths (direct, host-staged)"
	var res GPUResult
	skip := func(why string) GPUResult {
		res.Skipped = append(res.Skipped, why)
		return res
	}
	if err := cuda.Load(); err != nil {
		if cuda.IsNoDriver(err) {
			return skip(what + ": no NVIDIA driver on this machine")
		}
		return skip(what + ": " + err.Error())
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return skip(what + ": " + err.Error())
	}
	if n < 2 {
		return skip(fmt.Sprintf("%s: %d GPU found, a path needs two", what, n))
	}
	res.GPUs = n
	if d, err := cuda.Open(0); err == nil {
		res.GPUModel, _ = d.Name()
		_ = d.Close()
	}
	for b := 1; b < n; b++ {
		ps, c, err := measurePair(0, b, sizes, chunk, iters, shares)
		res.Paths = append(res.Paths, ps...)
		if c != nil {
			res.Contention = append(res.Contention, *c)
		}
		if err != nil {
			return skip(fmt.Sprintf("%s GPU 0 -> GPU %d: %v", what, b, err))
		}
	}
	return res
}

// gpuPair is what measuring one pair of GPUs holds.
type gpuPair struct {
	a, b       *cuda.Device
	src, dst   *cuda.Buffer
	host       *cuda.HostBuffer
	sa, sb, sd *cuda.Stream // a's (host path down), b's (host path up), a's for the direct copy beside the host path
	start, end *cuda.Event
	chunkEvs   []*cuda.Event
}

func (p *gpuPair) close() error {
	var errs []error
	for _, e := range append(p.chunkEvs, p.start, p.end) {
		if e != nil {
			errs = append(errs, e.Destroy())
		}
	}
	for _, s := range []*cuda.Stream{p.sa, p.sb, p.sd} {
		if s != nil {
			errs = append(errs, s.Destroy())
		}
	}
	for _, b := range []*cuda.Buffer{p.src, p.dst} {
		if b != nil {
			errs = append(errs, b.Free())
		}
	}
	if p.host != nil {
		errs = append(errs, p.host.Free())
	}
	for _, d := range []*cuda.Device{p.a, p.b} {
		if d != nil {
			errs = append(errs, d.Close())
		}
	}
	return errors.Join(errs...)
}

// measurePair measures the direct and host paths from GPU ia to GPU ib
// alone, then together. A failure of the together runs still returns the
// solo paths.
func measurePair(ia, ib int, sizes []int64, chunk int64, iters int, shares []float64) (paths []calib.CalibratedPath, cont *calib.CalibratedContention, err error) {
	maxBytes := sizes[0]
	for _, s := range sizes {
		maxBytes = max(maxBytes, s)
	}
	p := &gpuPair{}
	defer func() { err = errors.Join(err, p.close()) }()
	if p.a, err = cuda.Open(ia); err != nil {
		return nil, nil, err
	}
	if p.b, err = cuda.Open(ib); err != nil {
		return nil, nil, err
	}
	peer, err := p.a.CanAccessPeer(p.b)
	if err != nil {
		return nil, nil, err
	}
	if peer {
		if err := p.a.EnablePeerAccess(p.b); err != nil {
			return nil, nil, err
		}
	}
	if p.src, err = p.a.Alloc(int(maxBytes)); err != nil {
		return nil, nil, err
	}
	if p.dst, err = p.b.Alloc(int(maxBytes)); err != nil {
		return nil, nil, err
	}
	if p.host, err = p.a.AllocHost(int(maxBytes)); err != nil {
		return nil, nil, err
	}
	if p.sa, err = p.a.NewStream(); err != nil {
		return nil, nil, err
	}
	if p.sb, err = p.b.NewStream(); err != nil {
		return nil, nil, err
	}
	if p.sd, err = p.a.NewStream(); err != nil {
		return nil, nil, err
	}
	if p.start, err = p.a.NewEvent(true); err != nil {
		return nil, nil, err
	}
	if p.end, err = p.a.NewEvent(true); err != nil {
		return nil, nil, err
	}
	if err := p.ensureChunkEvents(int((maxBytes + chunk - 1) / chunk)); err != nil {
		return nil, nil, err
	}
	from, to := fmt.Sprintf("GPU %d", ia), fmt.Sprintf("GPU %d", ib)
	direct := calib.CalibratedPath{Path: "direct", From: from, To: to}
	host := calib.CalibratedPath{Path: "host", From: from, To: to, ChunkBytes: chunk}
	for _, n := range sizes {
		us, err := p.timeDirect(int(n), iters)
		if err != nil {
			return nil, nil, fmt.Errorf("direct %d bytes: %w", n, err)
		}
		direct.Samples = append(direct.Samples, calib.CalibratedSample{Bytes: n, US: us})
		if us, err = p.timeHostStaged(int(n), int(chunk), iters); err != nil {
			return nil, nil, fmt.Errorf("host-staged %d bytes: %w", n, err)
		}
		host.Samples = append(host.Samples, calib.CalibratedSample{Bytes: n, US: us})
	}
	for _, cp := range []*calib.CalibratedPath{&direct, &host} {
		if err := cp.Fit(); err != nil {
			return nil, nil, err
		}
	}
	paths = []calib.CalibratedPath{direct, host}

	o := model.DefaultOptions()
	_, staged := calib.MeasuredPaths(direct, host, o)
	runs := calib.PlanTogether(maxBytes, shares, staged, o)
	times := make([][]float64, calib.TogetherRounds)
	for r := range times {
		for _, run := range runs {
			us, err := p.timeTogether(run, iters)
			if err != nil {
				return paths, nil, fmt.Errorf("direct + host, %.0f%% on host: %w", 100*run.Share, err)
			}
			times[r] = append(times[r], us)
		}
	}
	c, err := calib.FitTogether(direct, host, maxBytes, runs, times, o)
	if err != nil {
		return paths, nil, err
	}
	return paths, &c, nil
}

// ensureChunkEvents makes sure there is an event on a for each of k chunks.
func (p *gpuPair) ensureChunkEvents(k int) error {
	for len(p.chunkEvs) < k {
		e, err := p.a.NewEvent(false)
		if err != nil {
			return err
		}
		p.chunkEvs = append(p.chunkEvs, e)
	}
	return nil
}

// timeDirect is the mean time of one peer copy of n bytes (events on a).
func (p *gpuPair) timeDirect(n, iters int) (float64, error) {
	if err := cuda.CopyAsync(p.sa, p.dst, 0, p.src, 0, n); err != nil { // warm-up
		return 0, err
	}
	if err := p.start.Record(p.sa); err != nil {
		return 0, err
	}
	for i := 0; i < iters; i++ {
		if err := cuda.CopyAsync(p.sa, p.dst, 0, p.src, 0, n); err != nil {
			return 0, err
		}
	}
	if err := p.end.Record(p.sa); err != nil {
		return 0, err
	}
	if err := p.end.Synchronize(); err != nil {
		return 0, err
	}
	d, err := cuda.Elapsed(p.start, p.end)
	if err != nil {
		return 0, err
	}
	return float64(d.Nanoseconds()) / 1e3 / float64(iters), nil
}

// enqueueStaged queues the host-staged copy of bytes [base, base+n) in
// chunks of chunk bytes: each chunk down on a's stream, an event, and up
// on b's stream once the event fires.
func (p *gpuPair) enqueueStaged(base, n, chunk int) error {
	for k, off := 0, base; off < base+n; k, off = k+1, off+chunk {
		c := min(chunk, base+n-off)
		if err := cuda.CopyDtoHAsync(p.sa, p.host, off, p.src, off, c); err != nil {
			return err
		}
		if err := p.chunkEvs[k].Record(p.sa); err != nil {
			return err
		}
		if err := p.sb.WaitEvent(p.chunkEvs[k]); err != nil {
			return err
		}
		if err := cuda.CopyHtoDAsync(p.sb, p.dst, off, p.host, off, c); err != nil {
			return err
		}
	}
	return nil
}

// wallMeanUS is the mean wall time of iters calls of once after one
// untimed warm-up call.
func wallMeanUS(once func() error, iters int) (float64, error) {
	if err := once(); err != nil { // warm-up
		return 0, err
	}
	start := time.Now()
	for i := 0; i < iters; i++ {
		if err := once(); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(start).Nanoseconds()) / 1e3 / float64(iters), nil
}

// timeHostStaged is the mean wall time of one staged transfer of n bytes
// in chunks of chunk bytes.
func (p *gpuPair) timeHostStaged(n, chunk, iters int) (float64, error) {
	return wallMeanUS(func() error {
		if err := p.enqueueStaged(0, n, chunk); err != nil {
			return err
		}
		return p.sb.Synchronize()
	}, iters)
}

// timeTogether is the mean wall time of one together run: the direct copy
// of the first directBytes on its own stream, launched first as the engine
// launches it, and the host-staged copy of the rest, until both are done.
func (p *gpuPair) timeTogether(r calib.TogetherRun, iters int) (float64, error) {
	if err := p.ensureChunkEvents(r.Chunks); err != nil {
		return 0, err
	}
	return wallMeanUS(func() error {
		if r.DirectBytes > 0 {
			if err := cuda.CopyAsync(p.sd, p.dst, 0, p.src, 0, int(r.DirectBytes)); err != nil {
				return err
			}
		}
		if r.StagedBytes > 0 {
			if err := p.enqueueStaged(int(r.DirectBytes), int(r.StagedBytes), int(r.ChunkBytes)); err != nil {
				return err
			}
		}
		if err := p.sd.Synchronize(); err != nil {
			return err
		}
		return p.sb.Synchronize()
	}, iters)
}
