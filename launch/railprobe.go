package launch

import (
	"fmt"
	"net"
	osexec "os/exec"
	"regexp"
	"strings"
)

// What a node namespace of the testbed (tests/netns/testbed.sh) says about
// its rails, read where a job's flags do not say it (goring bench --netns
// without --rails or --rail-rate).

// CountRails counts the devices rail0, rail1, ... of namespace ns.
func CountRails(ns string) (int, error) {
	var ifs []net.Interface
	err := InNetns(ns, func() (err error) { ifs, err = net.Interfaces(); return err })
	if err != nil {
		return 0, err
	}
	have := map[string]bool{}
	for _, i := range ifs {
		have[i.Name] = true
	}
	r := 0
	for have[RailDevice(r)] {
		r++
	}
	if r == 0 {
		return 0, fmt.Errorf("namespace %s has no device %s", ns, RailDevice(0))
	}
	return r, nil
}

var tcRate = regexp.MustCompile(`\brate (\S+)`)

// RailRate reads rail 0's rate from the tc qdisc the testbed put on it,
// as tc writes it (topo.ParseTCRate reads it).
func RailRate(ns string) (string, error) {
	out, err := osexec.Command("tc", "-n", ns, "qdisc", "show", "dev", RailDevice(0)).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("reading %s's rate (tc): %v: %s", ns, err, strings.TrimSpace(string(out)))
	}
	m := tcRate.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s's %s has no rate limit (tc qdisc: %s); give --rail-rate", ns, RailDevice(0), strings.TrimSpace(string(out)))
	}
	return string(m[1]), nil
}
