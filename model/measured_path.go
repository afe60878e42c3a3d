package model

// Paths from end-to-end measurements.
//
// `goring calibrate` times a staged path the way the engine runs it: the
// whole transfer, pipelined in chunks of C bytes, from the first copy's
// launch to the last copy's end, and fits a Hockney line to it. The model
// needs hop figures instead (Path). With both hops at bandwidth b, no
// per-hop startup and the per-chunk synchronization epsilon in the second
// stage, a transfer of x bytes in k = x/C chunks takes (eq. 13, case 2)
//
//	T(x) = C/b + k*epsilon + x/b = C/b + x*(1/b + epsilon/C),
//
// a line of slope 1/beta with 1/beta = 1/b + epsilon/C. Its intercept is
// mostly the pipeline's fill (C/b, a property of the chunk, not of the
// path), so only the measured bandwidth beta is used: given epsilon, the
// hop bandwidth is b = 1/(1/beta - epsilon/C). The measurement says
// nothing about epsilon on its own; the options' figure stands for it, as
// it does for the topology's paths. The model may then pick other chunk
// sizes for other shares, paying epsilon per chunk and the fill of its
// own chunks: at chunk C it reproduces the measured rate exactly.

// MeasuredDirectPath is the direct path with a measured startup and
// bandwidth (the Hockney fit of one peer copy).
func MeasuredDirectPath(alphaUS, betaGBps float64) Path {
	return Path{Name: DirectName, Alpha1US: alphaUS, Beta1GBps: betaGBps}
}

// MeasuredStagedPath is the staged path called name ("host", "gpu:K") whose
// pipeline, in chunks of chunkBytes, was measured at betaGBps end to end,
// with epsilonUS per chunk (see above). When the chunk is unknown
// (chunkBytes <= 0, files written before calibrate recorded it) the hops
// get the measured bandwidth and epsilon is paid on top: the per-chunk cost
// is then counted twice, which errs towards sending less over the staged
// path. If epsilonUS would leave no time for the bytes of a chunk
// (epsilon >= C/beta), it is taken as 0 and the hops get the measured
// bandwidth.
func MeasuredStagedPath(name string, betaGBps float64, chunkBytes int64, epsilonUS float64) Path {
	p := Path{Name: name, Staged: true, Beta1GBps: betaGBps, Beta2GBps: betaGBps, EpsilonUS: epsilonUS}
	if chunkBytes <= 0 {
		return p
	}
	inv := usPerByte(betaGBps) - epsilonUS/float64(chunkBytes)
	if !(inv > 0) {
		p.EpsilonUS = 0
		return p
	}
	b := 1 / inv / 1e3 // bytes per us to GB/s
	p.Beta1GBps, p.Beta2GBps = b, b
	return p
}
