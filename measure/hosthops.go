package measure

import (
	"fmt"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/model"
)

// HostHopSizes are the sizes HostHopFits times each host hop at: chunk
// sizes, as the host path moves its bytes.
var HostHopSizes = []int64{256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20}

// HostHopFits times device-to-host and host-to-device copies of pinned
// memory on d alone, with events, and fits each.
func HostHopFits(d *cuda.Device, src exec.Region) (d2h, h2d model.Fit, err error) {
	s, err := d.NewStream()
	if err != nil {
		return d2h, h2d, err
	}
	defer s.Destroy()
	top := HostHopSizes[len(HostHopSizes)-1]
	h, err := d.AllocHost(int(top))
	if err != nil {
		return d2h, h2d, err
	}
	defer h.Free()
	t0, err := d.NewEvent(true)
	if err != nil {
		return d2h, h2d, err
	}
	defer t0.Destroy()
	t1, err := d.NewEvent(true)
	if err != nil {
		return d2h, h2d, err
	}
	defer t1.Destroy()
	dp := cuda.DevicePtr(src.Addr())
	hops := []func(n int) error{
		func(n int) error { return cuda.CopyDtoHAddrAsync(s, h, 0, dp, n) },
		func(n int) error { return cuda.CopyHtoDAddrAsync(s, dp, h, 0, n) },
	}
	var fits [2]model.Fit
	for i, hop := range hops {
		var samples []model.Sample
		for _, n := range HostHopSizes {
			for rep := 0; rep < 5; rep++ {
				if err := t0.Record(s); err != nil {
					return d2h, h2d, err
				}
				if err := hop(int(n)); err != nil {
					return d2h, h2d, err
				}
				if err := t1.Record(s); err != nil {
					return d2h, h2d, err
				}
				if err := t1.Synchronize(); err != nil {
					return d2h, h2d, err
				}
				dt, err := cuda.Elapsed(t0, t1)
				if err != nil {
					return d2h, h2d, err
				}
				if rep > 0 { // the first is a warm-up
					samples = append(samples, model.Sample{Bytes: float64(n), TimeUS: float64(dt.Nanoseconds()) / 1e3})
				}
			}
		}
		if fits[i], err = model.FitHockney(samples); err != nil {
			return d2h, h2d, fmt.Errorf("host hop %d fit: %w", i, err)
		}
	}
	return fits[0], fits[1], nil
}
