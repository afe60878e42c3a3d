package cexec

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/exec"
)

var updateConstants = flag.Bool("update-constants", false, "rewrite cexec/constants.h from the Go constants")

const constantsPath = "constants.h"

// cConstants are the figures the C executor shares with Go, in the
// header's order: the macro, its Go value, and what it is.
var cConstants = []struct {
	macro string
	d     time.Duration
	what  string
}{
	{"GX_WATCH_US", exec.WatchEvery, "how long a call waits before its peers are checked (exec.WatchEvery)"},
	{"GX_CANCEL_US", exec.CancelWait, "how long a cancel waits for UCX to let go of buffers (exec.CancelWait)"},
}

// renderConstants writes the header: one #define per constant, in
// microseconds.
func renderConstants(t *testing.T) string {
	var b strings.Builder
	b.WriteString(`/*
 * constants.h: the timing cexec's C code shares with Go, in microseconds.
 * Generated from the Go constants and checked against them by
 *     go test ./cexec -run ConstantsHeader [-update-constants]
 * so do not edit it by hand: change the Go constant and regenerate.
 */
#ifndef GORING_CEXEC_CONSTANTS_H
#define GORING_CEXEC_CONSTANTS_H
`)
	for _, c := range cConstants {
		require.Zero(t, c.d%time.Microsecond, "%s: %v is not whole microseconds", c.macro, c.d)
		fmt.Fprintf(&b, "\n/* %s */\n#define %s %d\n", c.what, c.macro, c.d.Microseconds())
	}
	b.WriteString("\n#endif /* GORING_CEXEC_CONSTANTS_H */\n")
	return b.String()
}

// The C executor's timing is Go's: a constant changed in Go and not in the
// header fails here.
func TestConstantsHeaderMatchesGo(t *testing.T) {
	want := renderConstants(t)
	if *updateConstants {
		require.NoError(t, os.WriteFile(constantsPath, []byte(want), 0o644))
	}
	got, err := os.ReadFile(constantsPath)
	require.NoError(t, err)
	require.Equal(t, want, string(got), "cexec/constants.h is stale: rerun with -update-constants")
}
