package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The shares of goring calibrate's together runs (--shares); the runs'
// plan and fit are calib's (calib/together.go), measure/gpu.go
// times them.

// parseShares reads --shares: percentages of the bytes on the staged path,
// comma-separated, each in [0, 100). The fit needs two positive shares;
// 0 (the direct path alone, timed the same way) is added when missing, as
// it is the reference the others are compared with.
func parseShares(s string) ([]float64, error) {
	seen := map[float64]bool{0: true}
	out := []float64{0}
	positive := 0
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "%"))
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v >= 0 && v < 100) {
			return nil, fmt.Errorf("--shares %q: %q is not a percentage in [0, 100)", s, f)
		}
		if seen[v/100] {
			continue
		}
		seen[v/100] = true
		out = append(out, v/100)
		positive++
	}
	if positive < 2 {
		return nil, fmt.Errorf("--shares %q: the contention fit needs at least two positive shares", s)
	}
	return out, nil
}
