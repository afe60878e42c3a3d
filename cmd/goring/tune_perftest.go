package main

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// What goring tune reads of UCC's ucc_perftest (tools/perf in UCC's
// sources): its table rows, and the collective trace of its calls
// (UCC_COLL_TRACE=info), which names the layer each call ran on.

// perftestRow is a row of ucc_perftest's table: count, size (count times
// the datatype's size; for reduce_scatter every rank's input, so the
// ranks times the block each receives), then avg, min and max µs.
var perftestRow = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)`)

// perftestTimes reads a ucc_perftest table: average µs by bytes per rank
// (an allreduce's vector, an allgather's input block, a reduce_scatter's
// output block) for a team of np ranks.
func perftestTimes(r io.Reader, c string, np int) map[int64]float64 {
	out := map[int64]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := perftestRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		size, err1 := strconv.ParseInt(m[2], 10, 64)
		avg, err2 := strconv.ParseFloat(m[3], 64)
		if err1 != nil || err2 != nil || size <= 0 {
			continue
		}
		if c == "reduce_scatter" {
			size /= int64(np)
		}
		out[size] = avg
	}
	return out
}

// traceInit is UCC's trace line of a collective's init on CUDA buffers:
// the collective, the source's and destination's counts (a bcast has a
// source only), and the layer that took it ({TL_NCCL}, ...).
var traceInit = regexp.MustCompile(`(?i)coll_init: (\w+).*?src=\{[^,]*, (\d+), (\w+), cuda\}(?:, dst=\{[^,]*, (\d+), (\w+), cuda\})?.*?\{(TL_[^}]*)\}`)

// perftestLayers reads a trace run's output: the layers ("nccl", "cuda",
// "goring", ...) that ran each size, by bytes per rank, for float32
// calls (an allgather's source block, a bcast's vector, else the
// destination: an allreduce's vector, a reduce_scatter's block).
func perftestLayers(r io.Reader, c string) map[int64]map[string]bool {
	out := map[int64]map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := traceInit.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n := m[4]
		if c == "allgather" || c == "bcast" {
			n = m[2]
		}
		count, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			continue
		}
		b := count * 4 // float32, as goring tune runs it
		if out[b] == nil {
			out[b] = map[string]bool{}
		}
		out[b][strings.ToLower(strings.TrimPrefix(strings.TrimSpace(m[6]), "TL_"))] = true
	}
	return out
}
