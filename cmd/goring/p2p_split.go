package main

import (
	"math"

	"github.com/goring-hpc/goring/model"
)

// p2pPaths are the model's two paths between two processes on one GPU (or
// two GPUs of one node) as goring bench p2p measured them in the same run:
// the direct push (the engine's copy into the peer's mapping, protocol
// included) and the host-staged path, whose hops are a device-to-host and
// a host-to-device copy into pinned memory.
func p2pPaths(direct, d2h, h2d model.Fit, o model.Options) []model.Path {
	return []model.Path{
		{Name: model.DirectName, Alpha1US: direct.AlphaUS, Beta1GBps: direct.BetaGBps},
		{Name: model.HostName, Staged: true, Alpha1US: d2h.AlphaUS, Beta1GBps: d2h.BetaGBps,
			Alpha2US: h2d.AlphaUS, Beta2GBps: h2d.BetaGBps, EpsilonUS: o.HostStageEpsilonUS},
	}
}

// staticSplit is the split that puts pct percent of n on the host path,
// pipelined in the chunk count the model would choose for those bytes
// (Multi-path model, eq. 14/15, the slower hop deciding the case), and the
// rest on the direct path.
func staticSplit(paths []model.Path, n int64, pct int, o model.Options) model.Split {
	h := n * int64(pct) / 100
	host := paths[1]
	s := model.Split{Bytes: n, Paths: []model.Share{{Path: paths[0], Bytes: n - h, Chunks: 1}}}
	if h == 0 {
		return s
	}
	c := model.FirstHopBound // the slower hop sets the pace of the pipeline
	if host.Beta2GBps < host.Beta1GBps {
		c = model.SecondHopBound
	}
	k := int(math.Round(model.OptimalChunksContinuous(host, float64(h), c)))
	k = max(1, min(k, o.MaxChunks, int(h/max(o.MinChunkBytes, 1))))
	s.Paths = append(s.Paths, model.Share{Path: host, Bytes: h, Chunks: k})
	return s
}
