package sweep

import "fmt"

// Row is one (algorithm, size) result of the goring sim document.
type Row struct {
	Algorithm   string   `json:"algorithm"`
	Chosen      string   `json:"chosen,omitempty"` // what auto picked
	Bytes       int64    `json:"bytes"`
	PredictedUS *float64 `json:"predicted_us,omitempty"`
	// PredictedAvgUS, only with Job.RankAvg, is each rank's finish
	// averaged over ranks (sim.Result.MeanRankEndUS); PredictedUS is the
	// last rank's.
	PredictedAvgUS *float64 `json:"predicted_avg_us,omitempty"`
	BusBWGBps      *float64 `json:"busbw_GBps,omitempty"`
	Bottleneck     string   `json:"bottleneck,omitempty"`
	Error          string   `json:"error,omitempty"`
	Lanes          int      `json:"lanes,omitempty"` // lane runs
}

// Doc is the goring sim document (goring sim --json).
type Doc struct {
	Collective  string   `json:"collective"`
	Topology    string   `json:"topology"`
	Nodes       int      `json:"nodes"`
	NRanks      int      `json:"nranks"`
	Calibration []string `json:"calibration,omitempty"` // the measured figures that replaced the topology's
	WorkerGBps  float64  `json:"worker_GBps,omitempty"` // lane runs: the worker model
	NodeCores   int      `json:"node_cores,omitempty"`
	Results     []Row    `json:"results"`
}

// newDoc is j's document with no results yet.
func (j *Job) newDoc() *Doc {
	return &Doc{Collective: string(j.Coll), Topology: j.Topo.Name, Nodes: j.Topo.NumNodes(), NRanks: j.Topo.NumGPUs(), Calibration: j.Notes}
}

// anyPredicted checks that doc predicts something: a document of nothing
// but errors is an error (what), not a table of dashes.
func (j *Job) anyPredicted(doc *Doc, what string) (*Doc, error) {
	for _, r := range doc.Results {
		if r.PredictedUS != nil {
			return doc, nil
		}
	}
	if len(doc.Results) > 0 {
		return nil, fmt.Errorf("%s on %s: %s: %s", j.Coll, j.Topo.Name, what, doc.Results[0].Error)
	}
	return doc, nil
}
