package team

import (
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// planCache keeps the plans of a team's recent collectives, each with the
// executors (and their scratch memory) of finished calls ready for the
// next call of the same shape: an application repeats the same few calls
// (OSU loops, training steps), and generating a plan and building an
// executor cost far more than running a small collective. Bounded: at most
// planCacheSize plans, all dropped at once when full (simple, and a
// workload cycling through more shapes than that pays generation anyway).
type planCache struct {
	plans map[planKey]*planEntry
	// stepLoads annotates each plan with its step loads
	// (sched.AnnotateLoads) for the engine's planner.
	stepLoads bool
}

const planCacheSize = 64

// planKey is everything that changes a plan or its executor within one
// team (the topology is the team's).
type planKey struct {
	coll  string
	alg   string
	bytes int64
	elem  int
	root  int
	rank  int
	dtype coll.Dtype
	op    coll.Op
	mem   exec.Mem // an executor is built for one memory type
	// chunks: the pieces transfers pipeline in (sched.Spec.Chunks).
	chunks int
	// layout is an alltoallv call's counts and displacements (alltoallv.go,
	// a2aLayout.key); "" for other collectives.
	layout string
}

// planEntry is one cached plan and its idle executors.
type planEntry struct {
	plan *sched.Plan
	// prog is the rank's program when it is not the plan's (an alltoallv
	// program mapped onto the caller's displacements); nil: the plan's.
	prog    *sched.RankProgram
	idle    []*pooledMachine
	evicted bool // dropped from the cache: executors coming back are freed
}

// pooledMachine is an executor with the scratch memory it owns: host
// memory from ucx.Alloc, or device memory of its GPU.
type pooledMachine struct {
	m          *exec.Machine
	scratch    []byte // ucx.Alloc'd
	devScratch exec.Region
	gpu        *teamGPU // owner of devScratch
}

func (pm *pooledMachine) free() {
	if pm.scratch != nil {
		_ = ucx.Free(pm.scratch)
		pm.scratch = nil
	}
	if pm.gpu != nil && pm.devScratch.Len() > 0 {
		_ = pm.gpu.g.Free(pm.devScratch)
		pm.devScratch = exec.Region{}
	}
}

// get returns the entry of rank's plan for spec, generating the plan
// (sched.GenerateRank) on a miss.
func (pc *planCache) get(spec sched.Spec, rank int, dtype coll.Dtype, op coll.Op, mem exec.Mem) (*planEntry, error) {
	k := planKey{coll: string(spec.Collective), alg: spec.Algorithm, bytes: spec.Bytes, elem: spec.DtypeBytes,
		root: spec.Root, rank: rank, dtype: dtype, op: op, mem: mem, chunks: spec.Chunks}
	return pc.getKeyed(k, func() (*planEntry, error) {
		p, err := pc.generate(spec, rank)
		return &planEntry{plan: p}, err
	})
}

// getKeyed returns the entry of k, made by build on a miss.
func (pc *planCache) getKeyed(k planKey, build func() (*planEntry, error)) (*planEntry, error) {
	if e, ok := pc.plans[k]; ok {
		return e, nil
	}
	e, err := build()
	if err != nil {
		return nil, err
	}
	if pc.plans == nil || len(pc.plans) >= planCacheSize {
		pc.clear()
		pc.plans = map[planKey]*planEntry{}
	}
	pc.plans[k] = e
	return e, nil
}

// generate is rank's plan for spec, annotated with step loads if the
// team's engine plans with them.
func (pc *planCache) generate(spec sched.Spec, rank int) (*sched.Plan, error) {
	p, err := sched.GenerateRank(spec, rank)
	if err != nil {
		return nil, err
	}
	if pc.stepLoads {
		p.AnnotateRankLoads(rank)
	}
	return p, nil
}

// program is the entry's program of rank.
func (e *planEntry) program(rank int) *sched.RankProgram {
	if e.prog != nil {
		return e.prog
	}
	return &e.plan.Ranks[rank]
}

// clear drops every entry, freeing idle executors' scratch.
func (pc *planCache) clear() {
	for _, e := range pc.plans {
		e.evicted = true
		for _, pm := range e.idle {
			pm.free()
		}
		e.idle = nil
	}
	pc.plans = nil
}

// take returns an idle executor, or nil.
func (e *planEntry) take() *pooledMachine {
	n := len(e.idle)
	if n == 0 {
		return nil
	}
	pm := e.idle[n-1]
	e.idle = e.idle[:n-1]
	return pm
}

// put returns an executor whose call completed.
func (e *planEntry) put(pm *pooledMachine) {
	if e.evicted {
		pm.free()
		return
	}
	e.idle = append(e.idle, pm)
}
