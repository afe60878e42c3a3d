package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/measure"
)

// bench p2p --png draws the report of a real run (testdata: the --json of
// 2xH100, 2026-11-25, docs/gpu.md "One transfer on two H100s"): two panels,
// one way and both ways, one above the other.
func TestP2PPNG(t *testing.T) {
	data, err := os.ReadFile("testdata/p2p_h100x2.json")
	require.NoError(t, err)
	var rep measure.P2PReport
	require.NoError(t, json.Unmarshal(data, &rep))
	require.NotEmpty(t, rep.Rows)
	var buf bytes.Buffer
	require.NoError(t, writeP2PPNG(&buf, &rep))
	cfg, err := png.DecodeConfig(&buf)
	require.NoError(t, err)
	assert.Greater(t, cfg.Width, 0)
	assert.Equal(t, 2*cfg.Width*5/8, cfg.Height, "two 8x5 panels")

	oneWay := rep
	oneWay.Rows = nil
	for _, r := range rep.Rows {
		if !r.Bidir {
			oneWay.Rows = append(oneWay.Rows, r)
		}
	}
	buf.Reset()
	require.NoError(t, writeP2PPNG(&buf, &oneWay))
	cfg, err = png.DecodeConfig(&buf)
	require.NoError(t, err)
	assert.Equal(t, cfg.Width*5/8, cfg.Height, "one panel without bidirectional rows")

	require.Error(t, writeP2PPNG(&buf, &measure.P2PReport{}), "nothing to draw is an error, not an empty picture")
}
