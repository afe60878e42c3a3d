package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/gotest.json is go test -json ./... (Go 1.26) on a module of four
// packages: a passes, with a skipped test, a skip of two lines and a
// skipped subtest; b has a failed subtest, a passing test that logs and a
// skipped one; c has no tests; d does not build.
func TestScanJSON(t *testing.T) {
	in, err := os.Open("testdata/gotest.json")
	require.NoError(t, err)
	defer in.Close()
	var out, errOut bytes.Buffer
	skips, err := scanJSON(in, &out, &errOut)
	require.NoError(t, err)
	assert.Equal(t, []Skip{
		{"example.com/skmod/a", "TestSkip", "no CUDA driver"},
		{"example.com/skmod/a", "TestSkipMulti", "first line second line"},
		{"example.com/skmod/a", "TestSub/two", "set GORING_CUDA_BENCH=1"},
		{"example.com/skmod/b", "TestSkipped", "no UCC"},
	}, skips)
	// What go test prints without -v (the failed test as -v indents it),
	// and its last line, FAIL, as any package failed.
	assert.Equal(t, "        b_test.go:7: want 1, got 2\n"+
		"    --- FAIL: TestBad/sub (0.00s)\n"+
		"--- FAIL: TestBad (0.00s)\n"+
		"FAIL\n"+
		"FAIL\texample.com/skmod/b\t0.003s\n"+
		"ok  \texample.com/skmod/a\t0.004s\n"+
		"?   \texample.com/skmod/c\t[no test files]\n"+
		"FAIL\texample.com/skmod/d [build failed]\n"+
		"FAIL\n", out.String())
	assert.Equal(t, "# example.com/skmod/d [example.com/skmod/d.test]\nd/d_test.go:5:33: undefined: undefined\n", errOut.String())
}

func TestScanJSONPassesOtherLines(t *testing.T) {
	var out bytes.Buffer
	skips, err := scanJSON(strings.NewReader("not json\n"+
		`{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}`+"\n"+
		`{"Action":"pass","Package":"p"}`+"\n"), &out, &out)
	require.NoError(t, err)
	assert.Empty(t, skips)
	assert.Equal(t, "not json\nok  \tp\t0.1s\n", out.String())
}

func TestScanText(t *testing.T) {
	in := "stack: skipped: ucc-1.8.0.tar.gz not in ../shared/vendor\n" +
		"tests/stack: skipped: the real stack is not available (reason above)\n" +
		"osu_allgather: 20 rows validated, 0 failed\n"
	var out bytes.Buffer
	skips, err := scanText(strings.NewReader(in), &out)
	require.NoError(t, err)
	assert.Equal(t, in, out.String())
	assert.Equal(t, []Skip{
		{"stack", "-", "ucc-1.8.0.tar.gz not in ../shared/vendor"},
		{"tests/stack", "-", "the real stack is not available (reason above)"},
	}, skips)
}

func TestPrintList(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, printList(&out, "example.com/m/cuda\tTestKernels\tno CUDA driver\n"+
		"example.com/m\tTestRoot\tno GPU\ntests/stack\t-\tno stack\n", "example.com/m"))
	assert.Equal(t, "make test: 3 skipped:\n"+
		"  package      test         reason\n"+
		"  cuda         TestKernels  no CUDA driver\n"+
		"  .            TestRoot     no GPU\n"+
		"  tests/stack  -            no stack\n", out.String())
	out.Reset()
	require.NoError(t, printList(&out, "", "example.com/m"))
	assert.Equal(t, "make test: no test skipped\n", out.String())
}
