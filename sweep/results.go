package sweep

import (
	"fmt"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/model"
)

// Results simulates every size: each algorithm, or (auto) goring's one
// choice (choose.Auto) on the topology as the team layer would see it: the
// measured table's row where it has one, else the cheapest by this job's
// cost table, which samples powers of two and interpolates between. With
// one algorithm named, a size it cannot run is the error.
func (j *Job) Results(s *Runner, auto bool) (*Doc, error) {
	table := model.NewCostTable(string(j.Coll), j.key(), j.Algs, func(alg string, bytes int64) (float64, error) {
		m := s.run(alg, bytes)
		return m.us, m.err
	})
	doc := j.newDoc()
	for _, n := range j.Sizes {
		if auto {
			ch, err := choose.Auto(choose.OnTopology(j.Coll, n, j.Topo), table)
			if err != nil {
				doc.Results = append(doc.Results, Row{Algorithm: "auto", Bytes: n, Error: err.Error()})
				continue
			}
			r := s.Row(ch.Alg, n)
			if r.Error != "" && ch.Fallback != "" {
				ch.Alg = ch.Fallback
				r = s.Row(ch.Alg, n)
			}
			r.Algorithm, r.Chosen = "auto", ch.Alg
			doc.Results = append(doc.Results, r)
			continue
		}
		for _, a := range j.Algs {
			r := s.Row(a, n)
			if r.Error != "" && len(j.Algs) == 1 {
				return nil, fmt.Errorf("%s %s at %d bytes: %s", j.Coll, a, n, r.Error)
			}
			doc.Results = append(doc.Results, r)
		}
	}
	return j.anyPredicted(doc, "no algorithm can run")
}
