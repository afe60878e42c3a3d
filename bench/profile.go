package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// startProfile writes this rank's CPU profile of its timed loop into
// $GORING_CPUPROFILE_DIR, if set (a measurement aid: docs/results.md reads
// where a rank's time goes); the stopper ends and closes it.
func startProfile(rank int) (func(), error) {
	dir := os.Getenv("GORING_CPUPROFILE_DIR")
	if dir == "" {
		return func() {}, nil
	}
	pf, err := os.Create(filepath.Join(dir, fmt.Sprintf("rank%d.pprof", rank)))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}
