package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIterationsFollowOMB(t *testing.T) {
	cases := []struct {
		bytes               int64
		iters, warmup       int
		wantTimed, wantWarm int
	}{
		{1, 0, -1, 1000, 200},
		{8192, 0, -1, 1000, 200},
		{8193, 0, -1, 100, 10},
		{64 << 20, 0, -1, 100, 10},
		{64 << 20, 7, 0, 7, 0},
		{4, 3, 2, 3, 2},
	}
	for i, c := range cases {
		ti, wu := Iterations(c.bytes, c.iters, c.warmup)
		assert.Equal(t, c.wantTimed, ti, "case %d", i)
		assert.Equal(t, c.wantWarm, wu, "case %d", i)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{10, 30, 20, 40})
	assert.Equal(t, Summary{AvgUS: 25, MinUS: 10, MaxUS: 40}, s)
	assert.Equal(t, Summary{}, Summarize(nil))
}

// decodeHalf is an independent float16 decoder for the encoder's test.
func decodeHalf(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	if exp == 0 {
		return sign * mant / 1024 * math.Pow(2, -14)
	}
	return sign * (1 + mant/1024) * math.Pow(2, float64(exp-15))
}

func TestFloat16FromInt(t *testing.T) {
	known := map[int64]uint16{0: 0, 1: 0x3c00, 2: 0x4000, -2: 0xc000, 3: 0x4200, 100: 0x5640, 2048: 0x6800}
	for v, h := range known {
		assert.Equal(t, h, Float16FromInt(v), "value %d", v)
	}
	for v := int64(-2048); v <= 2048; v++ {
		require.Equal(t, float64(v), decodeHalf(Float16FromInt(v)), "value %d", v)
	}
}

// decode reads element e of dtype d as a float64 (exact for our values).
func decode(d coll.Dtype, b []byte) float64 {
	switch d {
	case coll.Int8:
		return float64(int8(b[0]))
	case coll.Uint8:
		return float64(b[0])
	case coll.Int16:
		return float64(int16(ne.Uint16(b)))
	case coll.Uint16:
		return float64(ne.Uint16(b))
	case coll.Int32:
		return float64(int32(ne.Uint32(b)))
	case coll.Uint32:
		return float64(ne.Uint32(b))
	case coll.Int64:
		return float64(int64(ne.Uint64(b)))
	case coll.Uint64:
		return float64(ne.Uint64(b))
	case coll.Float16:
		return decodeHalf(ne.Uint16(b))
	case coll.Bfloat16:
		return float64(math.Float32frombits(uint32(ne.Uint16(b)) << 16))
	case coll.Float32:
		return float64(math.Float32frombits(ne.Uint32(b)))
	case coll.Float64:
		return math.Float64frombits(ne.Uint64(b))
	}
	panic("dtype")
}

// refReduce computes an allreduce from every rank's src with float64
// arithmetic on decoded elements, independently of Pattern.expected.
func refReduce(p *Pattern, srcs [][]byte) []byte {
	es := p.Dtype.Size()
	out := make([]byte, len(srcs[0]))
	for off := 0; off+es <= len(out); off += es {
		acc := decode(p.Dtype, srcs[0][off:])
		for r := 1; r < len(srcs); r++ {
			v := decode(p.Dtype, srcs[r][off:])
			switch p.Op {
			case coll.Sum:
				acc += v
			case coll.Prod:
				acc *= v
			case coll.Min:
				acc = math.Min(acc, v)
			case coll.Max:
				acc = math.Max(acc, v)
			case coll.Land:
				acc = float64(b2i(acc != 0 && v != 0))
			case coll.Lor:
				acc = float64(b2i(acc != 0 || v != 0))
			case coll.Band:
				acc = float64(int64(acc) & int64(v))
			case coll.Bor:
				acc = float64(int64(acc) | int64(v))
			case coll.Bxor:
				acc = float64(int64(acc) ^ int64(v))
			}
		}
		p.putValue(out[off:off+es], int64(acc))
	}
	return out
}

func TestReductionPatternsAreExactAndChecked(t *testing.T) {
	for _, n := range []int{2, 3, 16} {
		for _, d := range coll.Dtypes {
			for _, op := range coll.Ops {
				if !coll.Supports(op, d) {
					continue
				}
				p := &Pattern{Coll: coll.Allreduce, Dtype: d, Op: op, NRanks: n, Bytes: int64(37 * d.Size())}
				for it := 0; it < 3; it++ {
					srcs := make([][]byte, n)
					for r := range srcs {
						srcs[r] = make([]byte, p.SrcBytes(r))
						p.FillSrc(srcs[r], r, it)
						// Every input decodes to the intended small integer.
						for e := 0; e < 37; e++ {
							require.Equal(t, float64(p.value(r, it, int64(e))), decode(d, srcs[r][e*d.Size():]), "%s %s r%d e%d", d, op, r, e)
						}
					}
					dst := refReduce(p, srcs)
					require.NoError(t, p.Check(dst, 1, it), "n%d %s %s it%d", n, d, op, it)
					dst[len(dst)-1] ^= 0x40
					var ve *ValidationError
					require.ErrorAs(t, p.Check(dst, 1, it), &ve, "n%d %s %s: corruption not caught", n, d, op)
					assert.Equal(t, int64(len(dst)-d.Size()), ve.Offset)
				}
			}
		}
	}
}

func TestMovePatternsChecked(t *testing.T) {
	n := 3
	counts := [][]int64{{0, 5, 300}, {7, 0, 0}, {1, 2, 3}}
	cases := []*Pattern{
		{Coll: coll.Allgather, NRanks: n, Bytes: 1001},
		{Coll: coll.Bcast, NRanks: n, Bytes: 513, Root: 2},
		{Coll: coll.Alltoallv, NRanks: n, Counts: counts},
		{Coll: coll.ReduceScatter, Dtype: coll.Int32, Op: coll.Sum, NRanks: n, Bytes: 12},
	}
	for i, p := range cases {
		srcs := make([][]byte, n)
		for r := range srcs {
			srcs[r] = make([]byte, p.SrcBytes(r))
			p.FillSrc(srcs[r], r, 4)
		}
		for r := 0; r < n; r++ {
			var dst []byte
			switch p.Coll {
			case coll.Allgather:
				for j := 0; j < n; j++ {
					dst = append(dst, srcs[j]...)
				}
			case coll.Bcast:
				dst = append(dst, srcs[p.Root]...)
			case coll.Alltoallv:
				for j := 0; j < n; j++ {
					var sd int64
					for k := 0; k < r; k++ {
						sd += counts[j][k]
					}
					dst = append(dst, srcs[j][sd:sd+counts[j][r]]...)
				}
			case coll.ReduceScatter:
				full := refReduce(p, srcs)
				dst = full[int64(r)*p.Bytes : int64(r+1)*p.Bytes]
			}
			require.NoError(t, p.Check(dst, r, 4), "case %d rank %d", i, r)
			if len(dst) > 0 {
				require.Error(t, p.Check(dst, r, 5), "case %d rank %d: wrong iteration accepted", i, r)
				dst[len(dst)/2] ^= 1
				require.Error(t, p.Check(dst, r, 4), "case %d rank %d: corruption accepted", i, r)
			}
		}
	}
}

func TestWriters(t *testing.T) {
	rows := []Row{
		{Collective: "allgather", Algorithm: "ring", Bytes: 1024, AvgUS: 12.5, MinUS: 10, MaxUS: 15, Iterations: 1000, BusBWGBps: 0.25, Validated: true, Mem: "host"},
		{Collective: "allgather", Algorithm: "ring", Bytes: 2048, AvgUS: 20, MinUS: 18, MaxUS: 22, Iterations: 1000, BusBWGBps: 0.3},
		{Collective: "allgather", Algorithm: "parallel_rings", Bytes: 1024, AvgUS: 11, MinUS: 9, MaxUS: 13, Iterations: 1000, BusBWGBps: 0.28},
	}
	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, rows))
	var generic map[string][]map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &generic))
	require.Len(t, generic["results"], 3)
	keys := []string{"collective", "algorithm", "bytes", "avg_us", "min_us", "max_us", "iterations", "busbw_GBps", "validated", "mem"}
	for _, k := range keys {
		assert.Contains(t, generic["results"][0], k)
	}
	assert.Len(t, generic["results"][0], len(keys))
	js.Reset()
	require.NoError(t, WriteJSON(&js, nil))
	assert.JSONEq(t, `{"results":[]}`, js.String())

	var csvb bytes.Buffer
	require.NoError(t, WriteCSV(&csvb, rows))
	lines := strings.Split(strings.TrimSpace(csvb.String()), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, strings.Join(CSVHeader, ","), lines[0])
	assert.Equal(t, "allgather,ring,1024,12.500,10.000,15.000,1000,0.250,true", lines[1])

	var tb bytes.Buffer
	tw := &TableWriter{W: &tb, Comment: "4 ranks"}
	for _, r := range rows {
		require.NoError(t, tw.Row(r))
	}
	out := tb.String()
	assert.Equal(t, 2, strings.Count(out, "# Size"))
	assert.Contains(t, out, "Avg Latency(us)")
	assert.Contains(t, out, "Bus BW(GB/s)")
	assert.Contains(t, out, "1024                   12.50             10.00             15.00        1000            0.25")
}
