//go:build ucc

package main

import "github.com/goring-hpc/goring/sched"

// planCache keeps the plans of a team's recent collectives: an
// application repeats the same few calls (OSU loops, training steps), and
// generating a plan costs far more than running a small one. Bounded: at
// most planCacheSize plans, dropped all at once when full (simple, and a
// workload that cycles through more shapes than that pays generation
// anyway).
type planCache struct {
	plans map[planKey]*sched.Plan
}

const planCacheSize = 64

// planKey is everything of a Spec that changes a plan within one team
// (the topology is the team's).
type planKey struct {
	coll     string
	alg      string
	bytes    int64
	elem     int
	root     int
	rank     int
	topoName string
}

// get returns rank's plan for spec, generating it (sched.GenerateRank) on
// a miss.
func (pc *planCache) get(spec sched.Spec, rank int) (*sched.Plan, error) {
	k := planKey{string(spec.Collective), spec.Algorithm, spec.Bytes, spec.DtypeBytes, spec.Root, rank, spec.Topo.Name}
	if p, ok := pc.plans[k]; ok {
		return p, nil
	}
	p, err := sched.GenerateRank(spec, rank)
	if err != nil {
		return nil, err
	}
	if pc.plans == nil || len(pc.plans) >= planCacheSize {
		pc.plans = map[planKey]*sched.Plan{}
	}
	pc.plans[k] = p
	return p, nil
}
