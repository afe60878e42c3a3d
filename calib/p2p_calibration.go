package calib

import (
	"fmt"
	"time"

	"github.com/goring-hpc/goring/model"
)

// goring bench p2p --calibration-out FILE writes what the run fitted as a
// goring.calibration/v1 document, for the engine's planner (bench
// --calibration, UCC_TL_GORING_CALIBRATION) and goring sim.
//
// Why a second writer beside goring calibrate: calibrate times the paths
// from one process, one stream per path, and on the 2xH100 machine
// (docs/gpu.md "Collectives with a calibration") it measured a direct
// copy of 2.5 us startup
// and a host path that costs it nothing (direct slowdown 0.002), so the
// planner split large steps onto the host path, and collectives from 64
// MiB ran 1.06-1.41x slower than without the split. Collectives move bytes
// through the push engine between two processes: a clear-to-send, a copy,
// a done message, and a host path staged by both processes. bench p2p
// measures exactly that (direct startup 28-43 us over three runs; the
// direct copy slowed by gamma = 0.40-0.48 while the host path runs), and with its figures
// the planner keeps every transfer direct, as the best static split does.
//
// The document holds, for the pair the two ranks ran on:
//   - the direct path: the Hockney fit of the push (startup and bandwidth);
//   - the host path: the slower hop's bandwidth and the two hops' startups,
//     with no chunk size, so that the model charges its per-chunk cost on
//     top (model.MeasuredStagedPath: errs towards less on the staged path);
//   - the contention: the direct path's lost fraction gamma/(1+gamma)
//     (model.SlowdownOfGamma: bench p2p's direct runs at beta/(1+gamma)
//     beside the host path), with the together samples it came from.

// P2PCalibration builds the document of a bench p2p run's fits f for
// ranks on GPUs a and b of a machine of gpus GPUs of model name, measured
// on host at date.
func P2PCalibration(f P2PFits, a, b, gpus int, name, host string, date time.Time) *Calibration {
	from, to := fmt.Sprintf("GPU %d", a), fmt.Sprintf("GPU %d", b)
	slowHop := min(f.D2H.BetaGBps, f.H2D.BetaGBps)
	cal := &Calibration{
		Schema: Schema, Host: host, Date: date.UTC().Format(time.RFC3339),
		GPUs: gpus, GPUModel: name,
		Paths: []CalibratedPath{
			{Path: model.DirectName, From: from, To: to, AlphaUS: f.Direct.AlphaUS, BetaGBps: f.Direct.BetaGBps,
				RelRMS: f.Direct.RelRMS, Outliers: []int64{}, Samples: []CalibratedSample{}},
			{Path: model.HostName, From: from, To: to, AlphaUS: f.D2H.AlphaUS + f.H2D.AlphaUS, BetaGBps: slowHop,
				Outliers: []int64{}, Samples: []CalibratedSample{}},
		},
		Skipped: []string{},
		Extra:   map[string]string{"source": "goring bench p2p (the push engine between two processes)"},
	}
	c := CalibratedContention{Path: model.HostName, From: from, To: to,
		DirectSlowdown: model.SlowdownOfGamma(f.DirectSlowdown), Outliers: []int{}}
	for _, s := range f.Together {
		c.Samples = append(c.Samples, model.TogetherSample{Bytes: s.Bytes, Share: float64(s.HostPct) / 100, US: s.TimeUS})
	}
	cal.Contention = []CalibratedContention{c}
	return cal
}
