package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/exec"
)

// Row is one measured (collective, algorithm, size), the element of the
// JSON contract of docs/contracts.md.
type Row struct {
	Collective string  `json:"collective"`
	Algorithm  string  `json:"algorithm"`
	Bytes      int64   `json:"bytes"`
	AvgUS      float64 `json:"avg_us"`
	MinUS      float64 `json:"min_us"`
	MaxUS      float64 `json:"max_us"`
	Iterations int     `json:"iterations"`
	BusBWGBps  float64 `json:"busbw_GBps"`
	Validated  bool    `json:"validated"`
	// Mem is where the buffers were: "host" or "cuda" (device N of each
	// rank is its rank's GPU, see goring bench --gpus).
	Mem string `json:"mem"`
	// Lanes is the number of lanes the call ran on (goring bench --lanes);
	// absent when the run did not ask for lanes (one).
	Lanes int `json:"lanes,omitempty"`
	// Ran and Runner are, for a row of Algorithm auto (the team's own
	// choice: bench.Auto), the algorithm the team ran
	// (team.Coll.Algorithm: a sched algorithm, or "node_...",
	// "crossmem") and its runner (team.Coll.Runner: "machine", "lanes",
	// "node", "onedevice", ...), as rank 0 saw them; absent otherwise.
	Ran    string `json:"ran,omitempty"`
	Runner string `json:"runner,omitempty"`
}

// Document is the --json output.
type Document struct {
	Results []Row `json:"results"`
}

// WriteJSON writes {"results":[...]} as one document.
func WriteJSON(w io.Writer, rows []Row) error {
	if rows == nil {
		rows = []Row{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Document{Results: rows})
}

// CSVHeader is the first line of the CSV output.
var CSVHeader = []string{"collective", "algorithm", "bytes", "avg_us", "min_us", "max_us", "iterations", "busbw_GBps", "validated"}

// WriteCSV writes a header and one line per row; rows of a run on lanes
// add a column, lanes, and rows of auto two last ones, ran and runner.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	lanes, auto := false, false
	for _, r := range rows {
		lanes = lanes || r.Lanes > 0
		auto = auto || r.Ran != ""
	}
	header := append([]string{}, CSVHeader...)
	if lanes {
		header = append(header, "lanes")
	}
	if auto {
		header = append(header, "ran", "runner")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, r := range rows {
		rec := []string{r.Collective, r.Algorithm, strconv.FormatInt(r.Bytes, 10), f(r.AvgUS), f(r.MinUS), f(r.MaxUS),
			strconv.Itoa(r.Iterations), f(r.BusBWGBps), strconv.FormatBool(r.Validated)}
		if lanes {
			rec = append(rec, strconv.Itoa(r.Lanes))
		}
		if auto {
			rec = append(rec, r.Ran, r.Runner)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// TableWriter prints OSU-style tables, one per algorithm, a row at a time
// so that long runs show results as they come.
type TableWriter struct {
	W       io.Writer
	Comment string // extra header text ("4 ranks, 2 nodes, float32")
	current string
}

// Row prints r, starting a new table when the algorithm changes. A table
// of auto has a last column: the algorithm the team ran at each size, and
// its runner.
func (t *TableWriter) Row(r Row) error {
	ranHead, ran := "", ""
	if r.Algorithm == Auto {
		ranHead, ran = "  Ran (runner)", fmt.Sprintf("  %s (%s)", r.Ran, r.Runner)
	}
	key := r.Collective + "/" + r.Algorithm + "/" + strconv.Itoa(r.Lanes)
	if key != t.current {
		sep := ""
		if t.current != "" {
			sep = "\n"
		}
		t.current = key
		v := ""
		if r.Lanes > 0 {
			v = fmt.Sprintf(", lanes %d", r.Lanes)
		}
		if r.Validated {
			v += ", validated"
		}
		if _, err := fmt.Fprintf(t.W, "%s# goring bench %s, algorithm %s%s%s\n%-10s%18s%18s%18s%12s%16s%s\n",
			sep, r.Collective, r.Algorithm, commentSep(t.Comment), v,
			"# Size", "Avg Latency(us)", "Min Latency(us)", "Max Latency(us)", "Iterations", "Bus BW(GB/s)", ranHead); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(t.W, "%-10d%18.2f%18.2f%18.2f%12d%16.2f%s\n", r.Bytes, r.AvgUS, r.MinUS, r.MaxUS, r.Iterations, r.BusBWGBps, ran)
	return err
}

func commentSep(c string) string {
	if c == "" {
		return ""
	}
	return ", " + c
}

// memName is the memory kind of a result row, without the device number
// (ranks of one row use different GPUs).
func memName(m exec.Mem) string {
	s := m.String()
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i]
	}
	return s
}
