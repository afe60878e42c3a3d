package tune

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/jsondoc"
)

// A claims file is a machine's own measured table (docs/contracts.md
// "goring.claims/v1"): goring's time and each of UCC's other layers' for
// CUDA allreduce, allgather, reduce_scatter and bcast, per size, on a team of a
// given number of ranks, one GPU each or all sharing one. `goring tune
// ucc` measures and writes it through UCC's own ucc_perftest; the team
// layer's claims option (UCC_TL_GORING_CLAIMS) reads it, and NodeClaims
// then decides from it instead of the tables shipped for H100 and H200
// nodes, on the teams it fits.

// ClaimsFormat names the format of a claims file.
const ClaimsFormat = "goring.claims/v1"

// ClaimsFile is a claims file's content.
type ClaimsFile struct {
	Format string `json:"format"`
	// GPU is the driver's name of the GPUs measured ("NVIDIA H200"): the
	// file fits a team whose GPU's name starts with it.
	GPU string `json:"gpu"`
	// Ranks and Shared are the team measured: its size, and whether its
	// ranks shared one GPU (else a GPU each).
	Ranks  int  `json:"ranks"`
	Shared bool `json:"shared"`
	// Measured (a date) and Command say where the figures came from.
	Measured string `json:"measured,omitempty"`
	Command  string `json:"command,omitempty"`
	// Rows are the sizes measured of each collective ("allreduce",
	// "allgather", "reduce_scatter", "bcast"), in increasing size.
	Rows map[string][]ClaimsRow `json:"rows"`
}

// ClaimsRow is one size: bytes per rank (an allreduce's or a bcast's
// vector, an allgather's input block, a reduce_scatter's output block), goring's
// time and each other layer's that ran the call itself, in µs, by UCC's
// name of the layer ("nccl", "cuda", "ucp").
type ClaimsRow struct {
	Bytes  int64              `json:"bytes"`
	Goring float64            `json:"goring_us"`
	Peers  map[string]float64 `json:"peers_us"`
}

// claimsColls are the collectives a claims file may hold: the CUDA calls
// goring claims by measurement.
var claimsColls = []coll.Collective{coll.Allreduce, coll.Allgather, coll.ReduceScatter, coll.Bcast}

// claimsPeers are the layers a claims file may time beside goring.
var claimsPeers = []string{"nccl", "cuda", "ucp"}

// MaxClaimsBytes and MaxClaimsRanks bound a claims file's sizes and team:
// far beyond any call measured, and small enough that a claim's end (twice
// the last row, in UCC's count: times the ranks for allgather) is still
// counted right in an int64.
const (
	MaxClaimsBytes = 1 << 40
	MaxClaimsRanks = 1 << 20
)

// ParseClaims reads and checks a claims file: its format, a GPU name,
// 2 to MaxClaimsRanks ranks, and rows of known collectives in strictly
// increasing sizes up to MaxClaimsBytes with positive times of known
// layers.
func ParseClaims(data []byte) (*ClaimsFile, error) {
	var f ClaimsFile
	// One document and nothing after it: the team layer reads this file
	// too, and must not take the first of two run together.
	if err := jsondoc.Decode(data, &f, true); err != nil {
		return nil, fmt.Errorf("not a %s document: %w", ClaimsFormat, err)
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Check says what is wrong with f, if anything (ParseClaims's rules).
func (f *ClaimsFile) Check() error {
	switch {
	case f.Format != ClaimsFormat:
		return fmt.Errorf("format %q: want %q", f.Format, ClaimsFormat)
	case strings.TrimSpace(f.GPU) == "":
		return fmt.Errorf("no gpu: the driver's name of the GPUs measured")
	case f.Ranks < 2 || f.Ranks > MaxClaimsRanks:
		return fmt.Errorf("ranks %d: a team of 2 to %d", f.Ranks, MaxClaimsRanks)
	case len(f.Rows) == 0:
		return fmt.Errorf("no rows")
	}
	for name, rows := range f.Rows {
		if !slices.Contains(claimsColls, coll.Collective(name)) {
			return fmt.Errorf("rows of %q: want %s", name, joinColls(claimsColls))
		}
		for i, r := range rows {
			switch {
			case r.Bytes <= 0:
				return fmt.Errorf("%s row %d: %d bytes", name, i, r.Bytes)
			case r.Bytes > MaxClaimsBytes:
				return fmt.Errorf("%s row %d: %d bytes: want at most %d", name, i, r.Bytes, int64(MaxClaimsBytes))
			case i > 0 && r.Bytes <= rows[i-1].Bytes:
				return fmt.Errorf("%s row %d: %d bytes after %d: sizes must increase", name, i, r.Bytes, rows[i-1].Bytes)
			case !(r.Goring > 0):
				return fmt.Errorf("%s at %d bytes: goring's time %v µs", name, r.Bytes, r.Goring)
			}
			for l, us := range r.Peers {
				if !slices.Contains(claimsPeers, l) {
					return fmt.Errorf("%s at %d bytes: layer %q: want one of %s", name, r.Bytes, l, strings.Join(claimsPeers, ", "))
				}
				if !(us > 0) {
					return fmt.Errorf("%s at %d bytes: %s's time %v µs", name, r.Bytes, l, us)
				}
			}
		}
	}
	return nil
}

// fits says whether f is the measured table of a team of ranks on GPUs
// named gpu, shared or one each.
func (f *ClaimsFile) fits(gpu string, ranks int, shared bool) bool {
	return f != nil && f.Ranks == ranks && f.Shared == shared && strings.HasPrefix(gpu, f.GPU)
}

// table is f as the node claims' table.
func (f *ClaimsFile) table() *nodeTable {
	t := &nodeTable{gpu: f.GPU, ranks: f.Ranks, shared: f.Shared, rows: map[coll.Collective][]nodeRow{}}
	for name, rows := range f.Rows {
		c := coll.Collective(name)
		for _, r := range rows {
			t.rows[c] = append(t.rows[c], nodeRow{bytes: r.Bytes, goring: r.Goring, peers: r.Peers})
		}
	}
	return t
}

// Sorted returns f's collectives in a stable order.
func (f *ClaimsFile) Sorted() []string {
	names := make([]string, 0, len(f.Rows))
	for n := range f.Rows {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func joinColls(cs []coll.Collective) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}
