package sweep

import (
	"fmt"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Which algorithms goring sim predicts, from what --alg names.

// Algorithms are the algorithms of c that alg names: every registered one
// for "all" and "auto" (auto's choice is made per size, among them:
// Job.Results), else the one named, which must be registered.
func Algorithms(c coll.Collective, alg string) ([]string, error) {
	if alg == "all" || alg == "auto" {
		algs := sched.AlgorithmNames(c)
		if len(algs) == 0 {
			return nil, fmt.Errorf("no %s algorithms are registered yet", c)
		}
		return algs, nil
	}
	if _, err := sched.Lookup(c, alg); err != nil {
		return nil, err
	}
	return []string{alg}, nil
}

// MoEAlgorithms are the algorithms of dispatch or combine c that alg
// names on t: for "auto" goring's one choice on t (choose.Auto, the same
// for every token count) and its fallback, where the choice cannot serve
// a routing; every registered one for "all"; else the one named, which
// must be registered.
func MoEAlgorithms(c coll.Collective, alg string, t *topo.Topology) (algs []string, fallback string, err error) {
	switch alg {
	case "auto":
		ch, err := choose.Auto(choose.OnTopology(c, 0, t), nil)
		if err != nil {
			return nil, "", err
		}
		return []string{ch.Alg}, ch.Fallback, nil
	case "all":
		return sched.AlgorithmNames(c), "", nil
	}
	if _, err := sched.Lookup(c, alg); err != nil {
		return nil, "", err
	}
	return []string{alg}, "", nil
}
