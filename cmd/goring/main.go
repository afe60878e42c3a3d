// Command goring plans, simulates, benchmarks and calibrates goring's
// collectives. See DESIGN.md for the contract of each subcommand; every
// subcommand lives in a file of its own and registers itself in init.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:           "goring",
	Short:         "plan, simulate, benchmark and calibrate multi-path GPU collectives",
	SilenceUsage:  true,
	SilenceErrors: true,
}

// exitError carries a specific exit status up to main (for example 3 for
// "no NVIDIA driver" in topo detect).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withExit wraps err so that main exits with code.
func withExit(code int, err error) error { return &exitError{code: code, err: err} }

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI and returns the exit status. Errors print as one line
// on stderr, so scripts can show them and nothing lands on stdout.
func run(args []string) int {
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
	fmt.Fprintln(os.Stderr, "goring: "+msg)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
