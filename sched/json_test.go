package sched

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

func TestProgramJSONRoundTrip(t *testing.T) {
	cases := []Spec{
		{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(2, 2), Bytes: 12, DtypeBytes: 4, Chunks: 2},
	}
	for i, spec := range cases {
		plan, err := Generate(spec)
		require.NoError(t, err, "case %d", i)
		plan.Ranks[1].Steps[1].Path = Path{Kind: PathRail, Index: 3}
		data, err := MarshalProgram(plan)
		require.NoError(t, err)
		back, err := ParseProgram(data)
		require.NoError(t, err, "case %d:\n%s", i, data)
		again, err := MarshalProgram(back)
		require.NoError(t, err)
		assert.Equal(t, string(data), string(again), "case %d", i)
		assert.Equal(t, plan.Ranks[1].Steps[1].Path, back.Ranks[1].Steps[1].Path)
		_, err = Verify(back)
		require.NoError(t, err)
	}
}

func TestProgramJSONBuffersPerRank(t *testing.T) {
	plan := handPlan(coll.Alltoallv, 2, 0, Sizes{})
	plan.Counts = [][]int64{{0, 4}, {8, 0}}
	plan.Ranks[0].Sizes = Sizes{Src: 4, Dst: 8}
	plan.Ranks[1].Sizes = Sizes{Src: 8, Dst: 4}
	data, err := MarshalProgram(plan)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"buffers":[{"src":4,"dst":8,"scratch":0},{"src":8,"dst":4,"scratch":0}]`)
	back, err := ParseProgram(data)
	require.NoError(t, err)
	assert.Equal(t, plan.Ranks[1].Sizes, back.Ranks[1].Sizes)
}

// The docs/contracts.md example, with rail0 spelled as there.
const designExample = `{"schema":"goring.program/v1","collective":"allgather","algorithm":"parallel_rings",
 "topology":"clusterB","nranks":1,"bytes":1048576,"dtype_bytes":4,
 "counts":null,
 "buffers":{"src":1048576,"dst":16777216,"scratch":4096},
 "ranks":[{"rank":0,"node":0,"local":0,"steps":[
   {"id":0,"op":"copy","src":{"buf":"src","off":0},"dst":{"buf":"dst","off":0},"len":1048576,"deps":[]},
   {"id":1,"op":"reduce","src":{"buf":"scratch","off":0},"dst":{"buf":"dst","off":0},"len":4096,"deps":[0]}
 ]}]}`

func TestParseProgramRejects(t *testing.T) {
	_, err := ParseProgram([]byte(designExample))
	require.NoError(t, err)
	sendLine := `{"id":0,"op":"send","peer":1,"tag":1,"buf":"dst","off":0,"len":4,"path":"rail0","deps":[]}`
	two := func(step0, step1 string) string {
		return `{"schema":"goring.program/v1","collective":"allgather","algorithm":"x","topology":"t","nranks":2,"bytes":4,"dtype_bytes":4,"counts":null,"buffers":{"src":4,"dst":8,"scratch":0},"ranks":[{"rank":0,"node":0,"local":0,"steps":[` + step0 + `]},{"rank":1,"node":0,"local":1,"steps":[` + step1 + `]}]}`
	}
	okRecv := `{"id":0,"op":"recv","peer":0,"tag":1,"buf":"dst","off":0,"len":4,"deps":[]}`
	_, err = ParseProgram([]byte(two(sendLine, okRecv)))
	require.NoError(t, err)
	cases := []struct {
		name, doc, want string
	}{
		{"1 unknown field", strings.Replace(designExample, `"nranks"`, `"nrank":1,"nranks"`, 1), `unknown field "nrank"`},
		{"2 bad schema", strings.Replace(designExample, "goring.program/v1", "goring.program/v0", 1), `schema "goring.program/v0"`},
		{"3 bad op", two(strings.Replace(sendLine, `"send"`, `"put"`, 1), okRecv), `ranks[0].steps[0]: unknown op "put"`},
		{"4 bad buf", two(strings.Replace(sendLine, `"buf":"dst"`, `"buf":"tmp"`, 1), okRecv), `unknown buffer "tmp"`},
		{"5 bad path", two(strings.Replace(sendLine, `"rail0"`, `"nvlink"`, 1), okRecv), `unknown path "nvlink"`},
		{"6 dep not earlier", two(strings.Replace(sendLine, `"deps":[]`, `"deps":[0]`, 1), okRecv), `ranks[0].steps[0]: deps: step 0 is not an earlier step`},
		{"7 ids out of order", two(strings.Replace(sendLine, `"id":0`, `"id":1`, 1), okRecv), `id 1, want 0`},
		{"8 negative off", two(strings.Replace(sendLine, `"off":0`, `"off":-4`, 1), okRecv), `negative off -4`},
		{"9 negative len", two(sendLine, strings.Replace(okRecv, `"len":4`, `"len":-1`, 1)), `ranks[1].steps[0]: negative len -1`},
		{"10 peer out of range", two(strings.Replace(sendLine, `"peer":1`, `"peer":2`, 1), okRecv), `peer 2 out of range 0..1`},
		{"11 ranks out of order", strings.Replace(two(sendLine, okRecv), `{"rank":1`, `{"rank":0`, 1), `ranks[1] has rank 0`},
		{"12 nranks mismatch", strings.Replace(two(sendLine, okRecv), `"nranks":2`, `"nranks":3`, 1), `nranks is 3 but ranks has 2 programs`},
		{"13 copy with peer", strings.Replace(designExample, `"op":"copy",`, `"op":"copy","peer":0,`, 1), `copy takes src, dst and len only`},
		{"14 missing deps", two(strings.Replace(sendLine, `,"deps":[]`, ``, 1), okRecv), `missing deps`},
		{"15 trailing data", designExample + "{}", `trailing data`},
		{"16 bad dtype", strings.Replace(designExample, `"dtype_bytes":4`, `"dtype_bytes":3`, 1), `dtype_bytes 3`},
		{"17 buffers list length", strings.Replace(two(sendLine, okRecv), `"buffers":{"src":4,"dst":8,"scratch":0}`, `"buffers":[{"src":4,"dst":8,"scratch":0}]`, 1), `buffers has 1 entries, want 2`},
		{"18 negative buffer", strings.Replace(designExample, `"scratch":4096`, `"scratch":-1`, 1), `negative size`},
		{"19 path on recv", two(sendLine, strings.Replace(okRecv, `"deps"`, `"path":"host","deps"`, 1)), `path is a hint of send steps only`},
		{"20 counts shape", strings.Replace(two(sendLine, okRecv), `"counts":null`, `"counts":[[1,2]]`, 1), `counts: 1 rows, want 2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseProgram([]byte(c.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.True(t, strings.HasPrefix(err.Error(), "program JSON: "), err.Error())
		})
	}
}
