package main

import (
	"bytes"
	"testing"
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
