package bench

import (
	"fmt"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// Which algorithms a job runs: the launcher and every rank decide alike,
// before anything starts, from the registry and the plans.

// Candidates are the algorithms alg names for collective c: every
// registered one for "all", Auto alone for Auto (the team's own choice),
// else the one named, which must be registered.
func Candidates(c coll.Collective, alg string) ([]string, error) {
	if alg == Auto {
		return []string{Auto}, nil
	}
	if alg != "all" {
		if _, err := sched.Lookup(c, alg); err != nil {
			return nil, err
		}
		return []string{alg}, nil
	}
	names := sched.AlgorithmNames(c)
	if len(names) == 0 {
		return nil, fmt.Errorf("no algorithms registered for %s", c)
	}
	return names, nil
}

// Admit plans alg at every lane count and size of c: runs says whether it
// serves one (and so runs); the sizes it does not serve are skipped, named
// in skipped ("" when none), or are an error when the user named alg
// (strict).
func (c *Config) Admit(alg string, strict bool) (runs bool, skipped string, err error) {
	var unsupported []string
	for _, w := range c.LaneCounts() {
		for _, s := range c.Sizes {
			err := c.PlanLanes(alg, s, w)
			switch {
			case sched.IsUnsupported(err):
				if strict {
					return false, "", fmt.Errorf("%s at %d bytes on %d ranks%s: %w", c.Collective, s, c.Topo.NumGPUs(), lanesNote(w), err)
				}
				unsupported = append(unsupported, fmt.Sprintf("%d bytes%s: %v", s, lanesNote(w), err))
			case err != nil:
				return false, "", fmt.Errorf("%s/%s at %d bytes%s: %w", c.Collective, alg, s, lanesNote(w), err)
			default:
				runs = true
			}
		}
	}
	if len(unsupported) > 0 {
		skipped = fmt.Sprintf("%s at %s", alg, strings.Join(unsupported, "; "))
	}
	return runs, skipped, nil
}

// AdmitAll admits each of candidates (Admit; strict where the user
// named the algorithm): the ones that serve a size run, in order, and
// skips names, for each that skipped some size, what it skipped. A job
// where none runs is an error that lists the skips.
func (c *Config) AdmitAll(candidates []string, strict bool) (algs, skips []string, err error) {
	for _, alg := range candidates {
		runs, skipped, err := c.Admit(alg, strict)
		if err != nil {
			return nil, nil, err
		}
		if skipped != "" {
			skips = append(skips, skipped)
		}
		if runs {
			algs = append(algs, alg)
		}
	}
	if len(algs) == 0 {
		return nil, skips, fmt.Errorf("no %s algorithm supports these sizes on %d ranks (%s)", c.Collective, c.Topo.NumGPUs(), strings.Join(skips, "; "))
	}
	return algs, skips, nil
}

// lanesNote names a lane count in messages ("" for one lane).
func lanesNote(w int) string {
	if w <= 1 {
		return ""
	}
	return fmt.Sprintf(" on %d lanes", w)
}
