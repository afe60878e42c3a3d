// Package measure times a machine's GPU paths for a calibration: the
// direct copy between two GPUs, the path staged through pinned host
// memory, the two together at a few shares (GPUPaths, gpu.go: `goring
// calibrate`), and the host path's two hops alone (HostHopFits,
// hosthops.go: `goring bench p2p`). It fits what it timed with package
// calib and model (calib.CalibratedPath.Fit, calib.FitTogether,
// model.FitHockney); the CLI reads the flags and writes the document.
//
// Unlike calib it is not pure: it drives the GPUs through package cuda
// (the driver by dlopen; without one, GPUPaths says why it skipped).
package measure
