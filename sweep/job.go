package sweep

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// Job is what to predict: Coll at every size of Sizes with every
// algorithm of Algs on Topo.
type Job struct {
	Coll   coll.Collective
	Sizes  []int64
	Algs   []string
	Topo   *topo.Topology
	Counts func(bytes int64) ([][]int64, error) // alltoallv's matrix per size; nil otherwise
	// Base is every plan's spec but its algorithm, size and counts: the
	// collective, the topology, the intra-node phase, the element size,
	// the pieces.
	Base  sched.Spec
	Opt   sim.Options
	Notes []string // what a calibration changed in Topo
	Lanes *Lanes   // nil: no lanes, the simulation of before lanes
	// RankAvg has every row carry the ranks' average finish too
	// (Row.PredictedAvgUS), what a time measured per rank and averaged
	// over ranks compares with.
	RankAvg bool
}

// key is what the cost table's predictions depend on: the topology and
// every option that changes a prediction.
func (j *Job) key() string {
	return fmt.Sprintf("%s intra=%s chunks=%d dtype=%d serialce=%t calibration=%q", model.CostTableKey(j.Topo), j.Base.Intra, j.Base.Chunks, j.Base.DtypeBytes, j.Opt.CopyEngineSerial, j.Notes)
}

// Spec is the plan spec of one (algorithm, size): alltoallv's matrix
// follows the size.
func (j *Job) Spec(alg string, bytes int64) (sched.Spec, error) {
	spec := j.Base
	spec.Algorithm, spec.Bytes = alg, bytes
	if j.Counts != nil {
		m, err := j.Counts(bytes)
		if err != nil {
			return spec, err
		}
		spec.Counts = m
	}
	return spec, nil
}

// Timeline runs the job's one (algorithm, size) with the simulator's
// timeline on, for a Gantt chart.
func (j *Job) Timeline() (*sim.Result, *sched.Plan, error) {
	if len(j.Algs) != 1 || len(j.Sizes) != 1 {
		return nil, nil, fmt.Errorf("a timeline is of one run: %d algorithms, %d sizes", len(j.Algs), len(j.Sizes))
	}
	spec, err := j.Spec(j.Algs[0], j.Sizes[0])
	if err != nil {
		return nil, nil, err
	}
	opt := j.Opt
	opt.Timeline = true
	return sim.Run(spec, opt)
}
