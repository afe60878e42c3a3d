package measure

import (
	"os"
	"time"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/launch"
)

// The calibration documents of this machine's runs: calib fits and
// formats them (pure); what only the running process knows (its host, its
// UCX transports, its GPUs, the date) is gathered here.

// HostCalibration is the document of the host path's samples (latUS[i],
// the one-way time of sizes[i] bytes: `goring calibrate`'s ping-pong), on
// this host with this process's UCX transports (UCX_TLS, or
// launch.DefaultTLS), dated now (calib.HostCalibration).
func HostCalibration(sizes []int64, latUS []float64) (*calib.Calibration, error) {
	host, _ := os.Hostname()
	tls := os.Getenv("UCX_TLS")
	if tls == "" {
		tls = launch.DefaultTLS()
	}
	return calib.HostCalibration(sizes, latUS, host, tls, time.Now())
}

// P2PCalibration is rep's calibration (calib.P2PCalibration,
// calib/p2p_calibration.go, which says why bench p2p writes one) between
// GPU ordinals g0 and g1 of this machine, named as the driver names g0,
// dated now. The caller validates and writes it.
func P2PCalibration(rep *P2PReport, g0, g1 int) (*calib.Calibration, error) {
	gpus, err := cuda.DeviceCount()
	if err != nil {
		return nil, err
	}
	name, err := cuda.DeviceName(g0)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return calib.P2PCalibration(rep.Fits, g0, g1, gpus, name, host, time.Now()), nil
}
