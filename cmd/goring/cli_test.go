package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// runCLI runs the goring CLI in-process and returns what it printed and its
// exit status.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestUnknownSubcommandFails(t *testing.T) {
	_, stderr, code := runCLI(t, "frobnicate")
	if code == 0 || stderr == "" {
		t.Fatalf("unknown subcommand: code %d, stderr %q", code, stderr)
	}
}

// A command line that does not parse (an unknown subcommand or flag, a
// flag value of the wrong kind, a wrong number of arguments) exits 2, as
// getopt and Go's flag package do, so a script can tell it from a run
// that failed (1) or a missing driver (3). Still one line on stderr.
func TestUsageErrorsExitTwo(t *testing.T) {
	for i, args := range [][]string{
		{"frobnicate"},
		{"--frobnicate"},
		{"topo", "frobnicate"},
		{"topo", "show", "--topo", "clusterA", "extra"},
		{"bench", "allgather", "--np", "two"},
		{"bench", "allgather", "--np", "2", "--frobnicate"},
		{"sim"},
		{"plan", "allgather", "extra", "--topo", "clusterB", "--bytes", "4"},
		{"model", "scores", "--np", "4", "--json=maybe"},
		{"tune", "show"},
	} {
		stdout, stderr, code := runCLI(t, args...)
		assert.Equal(t, 2, code, "case %d %v: %s", i, args, stderr)
		assert.Empty(t, stdout, "case %d", i)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d: one line: %q", i, stderr)
	}
	// A well-formed line with a bad value is a failed run, exit 1.
	_, stderr, code := runCLI(t, "plan", "allgather", "--alg", "nope", "--topo", "clusterB", "--bytes", "4")
	assert.Equal(t, 1, code, stderr)
}
