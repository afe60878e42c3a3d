// Command goring plans, simulates, benchmarks and calibrates goring's
// collectives. See docs/contracts.md for the contract of each subcommand; every
// subcommand lives in a file of its own and registers its constructor in
// init, so the tree is built fresh for every run (tests run it many times in
// one process without flag values leaking between runs).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// subcommands holds one constructor per top-level subcommand.
var subcommands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "goring",
		Short:         "plan, simulate, benchmark and calibrate multi-path GPU collectives",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExit(exitUsage, err) })
	usageArgs(root)
	return root
}

// exitUsage is the exit status of a command line that does not parse, as
// getopt's and Go's flag package's: a script tells it from a run that
// failed (1). A flag value that parses but is refused is a failed run.
const exitUsage = 2

// usageArgs makes every command's argument check (an unknown subcommand,
// a wrong number of arguments) exit with exitUsage; cobra reports those
// apart from its flag errors.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return withExit(exitUsage, err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
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
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns the exit status. Commands write results
// to cmd.OutOrStdout() and progress to cmd.ErrOrStderr(). Errors print as
// one line on stderr, so scripts can show them and nothing lands on stdout.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
	fmt.Fprintln(stderr, "goring: "+msg)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
