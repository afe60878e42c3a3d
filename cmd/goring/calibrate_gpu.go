package main

import (
	"errors"
	"fmt"
	"time"

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
//     Multi-path model section III), timed by the wall clock around the whole.
//
// GPU-staged paths (through a third GPU) need three GPUs and are left to
// the multi-path data plane. Pairs measured: GPU 0 to every other GPU.

// gpuCalibration measures the GPU paths of this machine, or says why not
// (the reason goes to the document's "skipped" list).
func gpuCalibration(sizes []int64, chunk int64, iters int) ([]model.CalibratedPath, string) {
	const what = "GPU paths (direct, host-staged)"
	if err := cuda.Load(); err != nil {
		if cuda.IsNoDriver(err) {
			return nil, what + ": no NVIDIA driver on this machine"
		}
		return nil, what + ": " + err.Error()
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, what + ": " + err.Error()
	}
	if n < 2 {
		return nil, fmt.Sprintf("%s: %d GPU found, a path needs two", what, n)
	}
	var paths []model.CalibratedPath
	for b := 1; b < n; b++ {
		ps, err := measurePair(0, b, sizes, chunk, iters)
		if err != nil {
			return paths, fmt.Sprintf("%s GPU 0 -> GPU %d: %v", what, b, err)
		}
		paths = append(paths, ps...)
	}
	return paths, ""
}

// gpuPair is what measuring one pair of GPUs holds.
type gpuPair struct {
	a, b       *cuda.Device
	src, dst   *cuda.Buffer
	host       *cuda.HostBuffer
	sa, sb     *cuda.Stream
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
	for _, s := range []*cuda.Stream{p.sa, p.sb} {
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

func measurePair(ia, ib int, sizes []int64, chunk int64, iters int) (paths []model.CalibratedPath, err error) {
	maxBytes := sizes[0]
	for _, s := range sizes {
		maxBytes = max(maxBytes, s)
	}
	p := &gpuPair{}
	defer func() { err = errors.Join(err, p.close()) }()
	if p.a, err = cuda.Open(ia); err != nil {
		return nil, err
	}
	if p.b, err = cuda.Open(ib); err != nil {
		return nil, err
	}
	peer, err := p.a.CanAccessPeer(p.b)
	if err != nil {
		return nil, err
	}
	if peer {
		if err := p.a.EnablePeerAccess(p.b); err != nil {
			return nil, err
		}
	}
	if p.src, err = p.a.Alloc(int(maxBytes)); err != nil {
		return nil, err
	}
	if p.dst, err = p.b.Alloc(int(maxBytes)); err != nil {
		return nil, err
	}
	if p.host, err = p.a.AllocHost(int(maxBytes)); err != nil {
		return nil, err
	}
	if p.sa, err = p.a.NewStream(); err != nil {
		return nil, err
	}
	if p.sb, err = p.b.NewStream(); err != nil {
		return nil, err
	}
	if p.start, err = p.a.NewEvent(true); err != nil {
		return nil, err
	}
	if p.end, err = p.a.NewEvent(true); err != nil {
		return nil, err
	}
	for k := int64(0); k < (maxBytes+chunk-1)/chunk; k++ {
		e, err := p.a.NewEvent(false)
		if err != nil {
			return nil, err
		}
		p.chunkEvs = append(p.chunkEvs, e)
	}
	from, to := fmt.Sprintf("GPU %d", ia), fmt.Sprintf("GPU %d", ib)
	direct := model.CalibratedPath{Path: "direct", From: from, To: to, Outliers: []int64{}}
	host := model.CalibratedPath{Path: "host", From: from, To: to, Outliers: []int64{}}
	for _, n := range sizes {
		us, err := p.timeDirect(int(n), iters)
		if err != nil {
			return nil, fmt.Errorf("direct %d bytes: %w", n, err)
		}
		direct.Samples = append(direct.Samples, model.CalibratedSample{Bytes: n, US: us})
		if us, err = p.timeHostStaged(int(n), int(chunk), iters); err != nil {
			return nil, fmt.Errorf("host-staged %d bytes: %w", n, err)
		}
		host.Samples = append(host.Samples, model.CalibratedSample{Bytes: n, US: us})
	}
	for _, cp := range []*model.CalibratedPath{&direct, &host} {
		if err := cp.Fit(); err != nil {
			return nil, err
		}
	}
	return []model.CalibratedPath{direct, host}, nil
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

// timeHostStaged is the mean wall time of one staged transfer of n bytes
// in chunks of chunk bytes.
func (p *gpuPair) timeHostStaged(n, chunk, iters int) (float64, error) {
	once := func() error {
		for k, off := 0, 0; off < n; k, off = k+1, off+chunk {
			c := min(chunk, n-off)
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
		return p.sb.Synchronize()
	}
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
