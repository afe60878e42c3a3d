package measure

import (
	"fmt"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
)

// P2PRow is one size of one (direction, window): microseconds per message
// (rank 0's view; both directions' bytes count for bidirectional GB/s).
type P2PRow struct {
	Bytes         int64   `json:"bytes"`
	Window        int     `json:"window"`
	Bidir         bool    `json:"bidirectional"`
	DirectUS      float64 `json:"direct_us"`
	UCXUS         float64 `json:"ucx_us"`
	ModelUS       float64 `json:"model_us"`
	ModelHostPct  float64 `json:"model_host_pct"`
	ModelChunks   int     `json:"model_chunks"`
	FreeUS        float64 `json:"contention_free_model_us"`
	FreeHostPct   float64 `json:"contention_free_host_pct"`
	BestUS        float64 `json:"best_static_us"`
	BestHostPct   int     `json:"best_static_host_pct"`
	PredictedUS   float64 `json:"predicted_us"`
	PredictionErr float64 `json:"prediction_error_pct"` // (predicted - measured) / measured of the model's split, window 1 one way only
}

// P2PReport is the JSON document of goring bench p2p --json
// (goring.p2p/v1, docs/contracts.md).
type P2PReport struct {
	Schema      string        `json:"schema"`
	Fits        calib.P2PFits `json:"fits"`
	Paths       []model.Path  `json:"paths"`
	MaxSharePct int           `json:"static_search_max_host_pct"`
	Checked     []int64       `json:"contents_checked_bytes"` // odd sizes sent split and compared byte for byte
	Rows        []P2PRow      `json:"rows"`
}

// row measures every column at one size. Both ranks run the same
// sequence; only rank 0's times are kept.
func (r *P2P) row(paths []model.Path, o model.Options, gamma float64, n int64, w int, bidir bool) (P2PRow, error) {
	row := P2PRow{Bytes: n, Window: w, Bidir: bidir}
	var err error
	if row.DirectUS, err = r.measure(nil, false, n, w, bidir); err != nil {
		return row, fmt.Errorf("direct: %w", err)
	}
	if row.UCXUS, err = r.measure(nil, true, n, w, bidir); err != nil {
		return row, fmt.Errorf("UCX cuda_ipc: %w", err)
	}
	split, err := calib.ContendedSplit(paths, n, o, gamma)
	if err != nil {
		return row, err
	}
	row.PredictedUS = split.PredictedUS
	if row.ModelUS, row.ModelHostPct, row.ModelChunks, err = r.measureSplit(split, row.DirectUS, w, bidir); err != nil {
		return row, fmt.Errorf("model split: %w", err)
	}
	free, err := model.Solve(paths, n, o, true)
	if err != nil {
		return row, err
	}
	if row.FreeUS, row.FreeHostPct, _, err = r.measureSplit(free, row.DirectUS, w, bidir); err != nil {
		return row, fmt.Errorf("contention-free split: %w", err)
	}
	if w == 1 && !bidir && row.ModelUS > 0 {
		row.PredictionErr = 100 * (row.PredictedUS - row.ModelUS) / row.ModelUS
	}
	row.BestUS, row.BestHostPct = row.DirectUS, 0
	for pct := 1; pct <= calib.P2PMaxShare; pct++ {
		plan, err := mpath.Build(calib.StaticSplit(paths, n, pct, o), r.eng.MaxStage())
		if err != nil {
			return row, err
		}
		us, err := r.measure(plan, false, n, w, bidir)
		if err != nil {
			return row, fmt.Errorf("static split %d%%: %w", pct, err)
		}
		if r.rank == 0 && us < row.BestUS {
			row.BestUS, row.BestHostPct = us, pct
		}
	}
	return row, nil
}

// measureSplit times split (the direct time when it uses one path) and
// returns its host share and chunks.
func (r *P2P) measureSplit(split model.Split, directUS float64, w int, bidir bool) (us, hostPct float64, chunks int, err error) {
	if split.DirectOnly || split.Used() < 2 {
		return directUS, 0, 0, nil
	}
	plan, err := mpath.Build(split, r.eng.MaxStage())
	if err != nil {
		return 0, 0, 0, err
	}
	if us, err = r.measure(plan, false, split.Bytes, w, bidir); err != nil {
		return 0, 0, 0, err
	}
	for _, sh := range split.Paths {
		if sh.Path.Staged && sh.Bytes > 0 {
			hostPct, chunks = 100*float64(sh.Bytes)/float64(split.Bytes), sh.Chunks
		}
	}
	return us, hostPct, chunks, nil
}
