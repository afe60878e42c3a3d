package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/calib"
)

// The shares of goring calibrate's together runs (--shares); the runs'
// plan and fit are calib's (calib/together.go), measure/gpu.go
// times them.

// parseShares reads --shares: percentages of the bytes on the staged path,
// comma-separated, each in [0, 100); calib.TogetherShares adds share 0 and
// checks that the fit has two positive shares.
func parseShares(s string) ([]float64, error) {
	var fractions []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "%"))
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v >= 0 && v < 100) {
			return nil, fmt.Errorf("--shares %q: %q is not a percentage in [0, 100)", s, f)
		}
		fractions = append(fractions, v/100)
	}
	shares, err := calib.TogetherShares(fractions)
	if err != nil {
		return nil, fmt.Errorf("--shares %q: %w", s, err)
	}
	return shares, nil
}
