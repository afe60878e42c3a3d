package sim

// Result is what one simulated run predicts.
type Result struct {
	// TotalUS is the time from the start until the last step completes.
	TotalUS float64 `json:"total_us"`
	// RankEndUS is, per rank, when its last step completed (0 for a rank
	// with no steps); TotalUS is the largest. A testbed's measured time
	// is each rank's own, averaged over ranks (MeanRankEndUS compares with
	// it), which for plans whose ranks finish far apart is well below
	// TotalUS.
	RankEndUS []float64 `json:"rank_end_us,omitempty"`
	// Steps is the timeline of every step (only with Options.Timeline), in
	// rank order then step order. A send and its recv share start and end:
	// start is when both were posted (the rendezvous), end is when the last
	// byte arrived.
	Steps []StepTiming `json:"steps,omitempty"`
	// Links lists every link that carried bytes, in link order.
	Links []LinkStat `json:"links"`
	// Bottleneck names the link whose bytes needed the most time at full
	// bandwidth (bytes / capacity): the first link to widen.
	Bottleneck string `json:"bottleneck"`
	// Transfers records every send with the links it shared (only with
	// Options.Trace).
	Transfers []Transfer `json:"transfers,omitempty"`
}

// StepTiming is when one step of one rank ran.
type StepTiming struct {
	Rank    int     `json:"rank"`
	Step    int     `json:"step"`
	StartUS float64 `json:"start_us"`
	EndUS   float64 `json:"end_us"`
}

// LinkStat is the load of one direction of one link.
type LinkStat struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	// BusyUS is how long at least one flow was moving bytes on the link.
	BusyUS float64 `json:"busy_us"`
	// Utilisation is bytes / (capacity * TotalUS): 1 means the link was
	// full for the whole run.
	Utilisation float64 `json:"utilisation"`
	// MaxFlows is the most flows the link carried at once.
	MaxFlows int `json:"max_flows"`
}

// Transfer is one send/recv pair as the simulator saw it (Options.Trace).
type Transfer struct {
	Src, Dst   int // ranks
	SendStep   int // step id in the sender's program
	RecvStep   int
	Bytes      int64
	StartUS    float64 // rendezvous
	ActiveUS   float64 // bytes started to move (after startup and any copy-engine wait)
	EndUS      float64
	QueuedOnCE bool // waited for its GPU's copy engine
	// SoloGBps is the rate it would have had alone: its narrowest link
	// (a link it crosses twice counts at half its capacity).
	SoloGBps float64
	// Links are the names of the directed links the transfer occupied.
	Links []string
	// Shared lists, per other transfer that was moving bytes on one of the
	// same links at the same time, that transfer's index in
	// Result.Transfers and the shared link's name.
	Shared []Overlap
}

// Overlap is one link shared with another transfer.
type Overlap struct {
	Other int
	Link  string
}

// MeanRankEndUS is the average over ranks of when each rank finished
// (RankEndUS): the prediction of a time measured per rank and averaged
// over ranks, where TotalUS predicts the slowest rank's.
func (r *Result) MeanRankEndUS() float64 {
	if len(r.RankEndUS) == 0 {
		return 0
	}
	sum := 0.0
	for _, t := range r.RankEndUS {
		sum += t
	}
	return sum / float64(len(r.RankEndUS))
}
