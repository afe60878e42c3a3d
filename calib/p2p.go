package calib

import (
	"math"
	"slices"

	"github.com/goring-hpc/goring/model"
)

// P2PPaths are the model's two paths between two processes on one GPU (or
// two GPUs of one node) as goring bench p2p measured them in the same run:
// the direct push (the engine's copy into the peer's mapping, protocol
// included) and the host-staged path, whose hops are a device-to-host and
// a host-to-device copy into pinned memory.
func P2PPaths(direct, d2h, h2d model.Fit, o model.Options) []model.Path {
	return []model.Path{
		{Name: model.DirectName, Alpha1US: direct.AlphaUS, Beta1GBps: direct.BetaGBps},
		{Name: model.HostName, Staged: true, Alpha1US: d2h.AlphaUS, Beta1GBps: d2h.BetaGBps,
			Alpha2US: h2d.AlphaUS, Beta2GBps: h2d.BetaGBps, EpsilonUS: o.HostStageEpsilonUS},
	}
}

// StaticSplit is the split that puts pct percent of n on the host path,
// pipelined in the chunk count the model would choose for those bytes
// (Multi-path model, eq. 14/15, the slower hop deciding the case), and the
// rest on the direct path.
func StaticSplit(paths []model.Path, n int64, pct int, o model.Options) model.Split {
	h := n * int64(pct) / 100
	host := paths[1]
	s := model.Split{Bytes: n, Paths: []model.Share{{Path: paths[0], Bytes: n - h, Chunks: 1}}}
	if h == 0 {
		return s
	}
	// Clamp before converting: a fitted startup of 0 makes eq. 14/15's
	// count +Inf, whose int conversion is implementation-defined.
	k := max(1, min(o.MaxChunks, int(h/max(o.MinChunkBytes, 1))))
	if kr := model.OptimalChunksContinuous(host, float64(h), pipeCase(host)); kr < float64(k) {
		k = max(1, int(math.Round(kr)))
	}
	s.Paths = append(s.Paths, model.Share{Path: host, Bytes: h, Chunks: k})
	return s
}

// The multi-path model assumes paths do not slow each other; on one GPU
// they do: the host path's copies share the copy engines and the memory
// the direct copy streams through. goring bench p2p fits one number for
// it, gamma: while a staged path runs, the direct path moves at
// beta/(1+gamma). This is the model's direct slowdown written as a gamma
// (model.GammaSlowedRate; model/contention.go defines both forms, and
// model.SlowdownOfGamma turns it into the calibration's lost fraction).
// What is bench p2p's own is the fit: a split keeps every path busy until
// the end, so the direct share is taken to run slowed the whole time
// (FitGamma), where model.FitContention fits both slowdowns to the
// overlap of the paths. The contention-aware split is the model's split
// over paths whose direct beta is beta/(1+gamma), kept only where it beats
// the direct path alone at full speed.

// P2PSample is a transfer of Bytes split with HostPct percent on the
// host path that took TimeUS.
type P2PSample struct {
	Bytes   int64   `json:"bytes"`
	HostPct int     `json:"host_pct"`
	TimeUS  float64 `json:"time_us"`
}

// FitGamma returns the median gamma the samples imply: each sample
// whose time the direct share sets (the host share finishing earlier by
// the model) gives gamma = (T - alpha) beta / direct bytes - 1 (T - alpha
// being the direct bytes at model.GammaSlowedRate(beta, gamma)), floored
// at 0; samples the host share sets say nothing about gamma and are
// skipped.
func FitGamma(paths []model.Path, o model.Options, samples []P2PSample) float64 {
	d := paths[0]
	var gs []float64
	for _, s := range samples {
		split := StaticSplit(paths, s.Bytes, s.HostPct, o)
		if len(split.Paths) < 2 {
			continue
		}
		host := split.Paths[1]
		hostUS := model.BestTimeContinuousUS(host.Path, float64(host.Bytes), pipeCase(host.Path))
		directBytes := float64(split.Paths[0].Bytes)
		if s.TimeUS <= hostUS*1.05 || directBytes <= 0 {
			continue
		}
		g := (s.TimeUS-d.Alpha1US)*d.Beta1GBps*1e3/directBytes - 1
		gs = append(gs, max(g, 0))
	}
	if len(gs) == 0 {
		return 0
	}
	slices.Sort(gs)
	return gs[len(gs)/2]
}

// ContendedSplit is the model's split under contention gamma (see above),
// with PredictedUS and DirectOnlyUS against the unslowed direct path.
func ContendedSplit(paths []model.Path, n int64, o model.Options, gamma float64) (model.Split, error) {
	free, err := model.Solve(paths, n, o, true)
	if err != nil || gamma <= 0 {
		return free, err
	}
	slowed := slices.Clone(paths)
	slowed[0].Beta1GBps = model.GammaSlowedRate(slowed[0].Beta1GBps, gamma)
	s, err := model.Solve(slowed, n, o, true)
	if err != nil {
		return s, err
	}
	alone := paths[0].Alpha1US + float64(n)/(paths[0].Beta1GBps*1e3)
	if s.DirectOnly || s.PredictedUS >= alone {
		return model.Split{Bytes: n, PredictedUS: alone, DirectOnlyUS: alone, DirectOnly: true,
			Paths: []model.Share{{Path: paths[0], Theta: 1, Bytes: n, Chunks: 1, PredictedUS: alone}}}, nil
	}
	s.DirectOnlyUS = alone
	return s, nil
}

// pipeCase is the case of Multi-path model eq. 13 a staged path falls in:
// the slower hop sets the pace.
func pipeCase(p model.Path) model.PipeCase {
	if p.Beta2GBps < p.Beta1GBps {
		return model.SecondHopBound
	}
	return model.FirstHopBound
}

// P2PMaxShare is the largest host share the static search tries (percent).
// On one GPU the host path moves tens of GB/s against the direct copy's
// thousand or more, so its useful share is a few percent: the search
// stops well above that.
const P2PMaxShare = 10

// P2PFits are the Hockney figures the run measured.
type P2PFits struct {
	Direct model.Fit `json:"direct"`
	D2H    model.Fit `json:"d2h"`
	H2D    model.Fit `json:"h2d"`
	// DirectSlowdown is gamma, fitted from Together (see FitGamma).
	DirectSlowdown float64     `json:"direct_slowdown"`
	Together       []P2PSample `json:"together"`
}

// P2PTogether are the (size, host percent) pairs the contention fit
// measures: shares around and above what the contention-free model picks.
var P2PTogether = []P2PSample{{Bytes: 64 << 20, HostPct: 2}, {Bytes: 64 << 20, HostPct: 5}, {Bytes: 256 << 20, HostPct: 2},
	{Bytes: 256 << 20, HostPct: 5}, {Bytes: 256 << 20, HostPct: 10}}
