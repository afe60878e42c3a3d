package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goring-hpc/goring/launch"
)

// rankJob is the local job of np processes of this binary that the
// launcher of goring bench, bench p2p and calibrate starts: each runs
// words (the subcommand) with every flag the launcher was given, as the
// launcher completed them, so that every rank builds the same job.
func rankJob(cmd *cobra.Command, np int, words ...string) launch.LocalJob {
	args := append([]string(nil), words...)
	cmd.Flags().Visit(func(fl *pflag.Flag) { args = append(args, "--"+fl.Name+"="+fl.Value.String()) })
	return launch.LocalJob{NP: np, Args: args, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
}
