package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
)

func TestBenchPNG(t *testing.T) {
	rows := []bench.Row{
		{Collective: "allgather", Algorithm: "ring", Bytes: 1024, AvgUS: 12.5, MinUS: 10, MaxUS: 15, Iterations: 1000, BusBWGBps: 0.25, Validated: true, Mem: "host"},
		{Collective: "allgather", Algorithm: "ring", Bytes: 2048, AvgUS: 20, MinUS: 18, MaxUS: 22, Iterations: 1000, BusBWGBps: 0.3},
		{Collective: "allgather", Algorithm: "parallel_rings", Bytes: 1024, AvgUS: 11, MinUS: 9, MaxUS: 13, Iterations: 1000, BusBWGBps: 0.28},
	}
	var png bytes.Buffer
	require.NoError(t, writeBenchPNG(&png, "allgather", rows))
	assert.True(t, bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")))
	assert.Error(t, writeBenchPNG(&png, "x", nil))
}
