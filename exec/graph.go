package exec

import "github.com/goring-hpc/goring/sched"

// Graph is a program's dependency structure in the form the executor runs
// it: per step, how many completions it waits for, whom it releases, and
// the next step of its (op, peer, tag) chain. The Machine builds one at
// New; package cexec lowers the same arrays into C, so that both executors
// follow one set of rules.
type Graph struct {
	// InitPending is each step's dependency count, plus one when an
	// earlier send or receive shares its (op, peer, tag): posts of one tag
	// leave in step id order and match in the order the program promises.
	InitPending []int32
	// DepOff and DepList are the dependents of step i:
	// DepList[DepOff[i]:DepOff[i+1]] (len(DepOff) is steps + 1).
	DepOff  []int32
	DepList []int32
	// NextSame is the next step with the same (op, peer, tag), or -1;
	// posting a step releases it.
	NextSame []int32
	// Sends and Recvs count the program's sends and receives.
	Sends, Recvs int
}

// BuildGraph computes prog's Graph.
func BuildGraph(prog *sched.RankProgram) Graph {
	steps := prog.Steps
	n := len(steps)
	g := Graph{InitPending: make([]int32, n), DepOff: make([]int32, n+1), NextSame: make([]int32, n)}
	ndeps := 0
	for id := range steps {
		deps := prog.Deps(id)
		g.InitPending[id] = int32(len(deps))
		ndeps += len(deps)
		for _, d := range deps {
			g.DepOff[d+1]++
		}
		switch steps[id].Op {
		case sched.OpSend:
			g.Sends++
		case sched.OpRecv:
			g.Recvs++
		}
	}
	for i := 0; i < n; i++ {
		g.DepOff[i+1] += g.DepOff[i]
	}
	g.DepList = make([]int32, ndeps)
	fill := make([]int32, n)
	copy(fill, g.DepOff[:n])
	for id := range steps {
		for _, d := range prog.Deps(id) {
			g.DepList[fill[d]] = int32(id)
			fill[d]++
		}
	}
	type key struct {
		op   sched.StepOp
		peer int32
		tag  int32
	}
	last := make(map[key]int32)
	for id := range steps {
		g.NextSame[id] = -1
		s := &steps[id]
		if s.Op != sched.OpSend && s.Op != sched.OpRecv {
			continue
		}
		k := key{s.Op, s.Peer, s.Tag}
		if prev, ok := last[k]; ok {
			g.NextSame[prev] = int32(id)
			g.InitPending[id]++
		}
		last[k] = int32(id)
	}
	return g
}
