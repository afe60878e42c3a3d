package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Suffixes: K/M/G/T and KiB/MiB/GiB/TiB are powers of 1024, as OSU and the
// MPI world read them; KB/MB/GB/TB are powers of 1000 for the rare user who
// means decimal units.
var multipliers = []struct {
	suffix string
	mult   int64
}{
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseBytes parses a non-negative size such as "64MiB", "1M", "4096".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	up := strings.ToUpper(t)
	mult := int64(1)
	for _, m := range multipliers {
		if strings.HasSuffix(up, m.suffix) {
			mult = m.mult
			up = strings.TrimSpace(up[:len(up)-len(m.suffix)])
			break
		}
	}
	n, err := strconv.ParseInt(up, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: want a whole number with an optional suffix (K, M, G, KiB, MiB, GiB)", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("bad size %q: negative", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return n * mult, nil
}

// ParseRange parses a size list as goring's --bytes takes it: "N" (one
// size), "a:b" (a, 2a, 4a, ... up to b, then b itself if the doubling
// skipped it, as OSU's -m option walks sizes), or a comma-separated list of
// either ("1,3,1KiB:4KiB,70001"), kept in the order given; a list lets a
// test reach odd sizes that doubling never produces.
func ParseRange(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		sizes, err := parseOneRange(part)
		if err != nil {
			return nil, err
		}
		out = append(out, sizes...)
	}
	return out, nil
}

func parseOneRange(s string) ([]int64, error) {
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		n, err := ParseBytes(s)
		if err != nil {
			return nil, err
		}
		return []int64{n}, nil
	}
	a, err := ParseBytes(lo)
	if err != nil {
		return nil, err
	}
	b, err := ParseBytes(hi)
	if err != nil {
		return nil, err
	}
	if a <= 0 {
		return nil, fmt.Errorf("bad size range %q: the lower bound must be positive", s)
	}
	if b < a {
		return nil, fmt.Errorf("bad size range %q: upper bound below lower bound", s)
	}
	var out []int64
	for n := a; n <= b; n *= 2 {
		out = append(out, n)
		if n > math.MaxInt64/2 {
			break
		}
	}
	if out[len(out)-1] != b {
		out = append(out, b)
	}
	return out, nil
}

// FormatBytes prints a size compactly with binary suffixes ("64MiB", "1000").
func FormatBytes(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}
