package calib

import (
	"errors"
	"fmt"
)

// TogetherShares are the shares of the together runs for the fractions
// asked for (each in [0, 1): of the bytes on the staged path): 0, the
// direct path alone timed the same way, first (added when missing: it is
// the reference the others are compared with), then each fraction once,
// in the order given. The contention fit needs at least two positive
// shares.
func TogetherShares(fractions []float64) ([]float64, error) {
	seen := map[float64]bool{0: true}
	out := []float64{0}
	for _, f := range fractions {
		if !(f >= 0 && f < 1) { // NaN too
			return nil, fmt.Errorf("share %g: want a fraction in [0, 1) of the bytes on the staged path", f)
		}
		if seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, f)
	}
	if len(out) < 3 {
		return nil, errors.New("the contention fit needs at least two positive shares")
	}
	return out, nil
}
