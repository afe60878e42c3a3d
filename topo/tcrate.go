package topo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// tcRateSpec is a rate as tc writes it: a number, an optional k, m or g
// (powers of 1000, any case) and "bit".
var tcRateSpec = regexp.MustCompile(`^(?i)([0-9]+(?:\.[0-9]+)?)([kmg]?)bit$`)

// ParseTCRate turns a tc rate ("500mbit", "1Gbit", "800Kbit") into GB/s,
// the unit of a rail's figures: the testbed's rails are rate-limited by
// tc, and its topology (Testbed.RailGBps) takes that rate.
func ParseTCRate(s string) (float64, error) {
	m := tcRateSpec.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("rate %q: want a tc rate such as 500mbit", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("rate %q: want a positive rate", s)
	}
	switch strings.ToLower(m[2]) {
	case "k":
		v *= 1e3
	case "m":
		v *= 1e6
	case "g":
		v *= 1e9
	}
	return v / 8 / 1e9, nil
}
