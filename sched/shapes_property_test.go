package sched

import (
	"fmt"
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// unequalNodes is a cluster whose node i has gpus[i] GPUs: the synthetic
// node of the widest, cut down. Topologies from a file may look like this
// (topo.Parse accepts it); FuzzGenerate's sweep shapes never do.
func unequalNodes(gpus ...int) *topo.Topology {
	widest := 0
	for _, g := range gpus {
		widest = max(widest, g)
	}
	t := topo.SweepShape(len(gpus), widest)
	for i, g := range gpus {
		t.Nodes[i].GPUs = t.Nodes[i].GPUs[:g]
	}
	t.Name = fmt.Sprintf("unequal%v", gpus)
	return t
}

// Over nodes of unequal GPU counts, every algorithm either says it cannot
// serve the shape (an *UnsupportedError, the same from every rank's
// GenerateRank) or builds a plan that Verify proves and whose programs
// GenerateRank builds alike, rank by rank.
func TestEveryAlgorithmOnUnequalNodes(t *testing.T) {
	shapes := [][]int{{2, 1}, {1, 3}, {3, 1, 2}, {4, 2}, {3, 3, 2}, {1, 1, 2}}
	colls := []coll.Collective{coll.Allgather, coll.ReduceScatter, coll.Allreduce, coll.Alltoallv, coll.Bcast}
	proved := map[coll.Collective]int{}
	for _, sh := range shapes {
		tp := unequalNodes(sh...)
		n := tp.NumGPUs()
		for _, c := range colls {
			for _, a := range Algorithms(c) {
				for _, elems := range []int64{1, 7, 64} {
					spec := Spec{Collective: c, Algorithm: a.Name, Topo: tp, Bytes: elems * 2, DtypeBytes: 2, Chunks: 2, Root: n - 1}
					name := fmt.Sprintf("%s %s/%s %d elements", tp.Name, c, a.Name, elems)
					whole, err := Generate(spec)
					if err != nil && !IsUnsupported(err) {
						t.Fatalf("%s: %v", name, err)
					}
					if err == nil {
						if _, err := Verify(whole); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						proved[c]++
					}
					for r := 0; r < n; r++ {
						one, err1 := GenerateRank(spec, r)
						if (err == nil) != (err1 == nil) {
							t.Fatalf("%s rank %d: Generate says %v, GenerateRank %v", name, r, err, err1)
						}
						if err != nil {
							continue
						}
						w, o := &whole.Ranks[r], &one.Ranks[r]
						if w.Sizes != o.Sizes || len(w.Steps) != len(o.Steps) {
							t.Fatalf("%s rank %d: GenerateRank's program differs from Generate's", name, r)
						}
						for id := range w.Steps {
							ws, os := w.Steps[id], o.Steps[id]
							ws.depOff, os.depOff = 0, 0
							if ws != os || fmt.Sprint(w.Deps(id)) != fmt.Sprint(o.Deps(id)) {
								t.Fatalf("%s rank %d step %d: GenerateRank's differs from Generate's", name, r, id)
							}
						}
					}
				}
			}
		}
	}
	for _, c := range colls {
		if proved[c] == 0 {
			t.Errorf("no %s algorithm served nodes of unequal GPU counts: the sweep checked nothing", c)
		}
	}
}
