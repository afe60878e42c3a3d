package tune

import (
	"fmt"
	"strconv"
	"strings"
)

// CountCPUList counts the CPUs of a Linux CPU list such as "0-23,48-71\n"
// (/sys/devices/system/cpu/online, a NUMA node's cpulist).
func CountCPUList(s string) (int, error) {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0, fmt.Errorf("CPU list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0, fmt.Errorf("CPU list %q: %q is not a range", s, part)
			}
		}
		n += b - a + 1
	}
	return n, nil
}
