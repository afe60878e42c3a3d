package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/tune"
	"github.com/goring-hpc/goring/units"
)

// goring tune show, and the table goring tune ucc prints: a claims
// file's rows, goring's ratio against each layer, and what goring would
// claim by it.

func newTuneShowCmd() *cobra.Command {
	var layers string
	c := &cobra.Command{
		Use:   "show FILE [--layers ucp,nccl,cuda]",
		Short: "print a claims file and what goring claims by it with UCC's --layers installed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadClaimsFile(args[0])
			if err != nil {
				return err
			}
			return writeClaimsTable(cmd.OutOrStdout(), f, splitList(layers))
		},
	}
	c.Flags().StringVar(&layers, "layers", "ucp,nccl,cuda", "UCC's team layers in the context")
	return c
}

// loadClaimsFile reads a goring.claims/v1 file.
func loadClaimsFile(path string) (*tune.ClaimsFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := tune.ParseClaims(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// writeClaimsTable prints f's rows, goring's ratio against each peer, and
// the score string goring would apply with the layers present.
func writeClaimsTable(w io.Writer, f *tune.ClaimsFile, present []string) error {
	how := "a GPU each"
	if f.Shared {
		how = "sharing one GPU"
	}
	fmt.Fprintf(w, "# %s, %d ranks %s, measured %s; µs; ratio = the peer's time / goring's (> 1: goring faster)\n", f.GPU, f.Ranks, how, f.Measured)
	peers := map[string]bool{}
	for _, rows := range f.Rows {
		for _, r := range rows {
			for l := range r.Peers {
				peers[l] = true
			}
		}
	}
	var ps []string
	for l := range peers {
		ps = append(ps, l)
	}
	sort.Strings(ps)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "collective\tbytes/rank\tgoring\t"
	for _, l := range ps {
		head += "tl/" + l + "\tratio\t"
	}
	fmt.Fprintln(tw, head)
	for _, c := range f.Sorted() {
		for _, r := range f.Rows[c] {
			line := fmt.Sprintf("%s\t%s\t%.1f\t", c, units.FormatBytes(r.Bytes), r.Goring)
			for _, l := range ps {
				if us, ok := r.Peers[l]; ok {
					line += fmt.Sprintf("%.1f\t%.2f\t", us, us/r.Goring)
				} else {
					line += "-\t-\t"
				}
			}
			fmt.Fprintln(tw, line)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	claims := tune.NodeClaims(f.GPU, f.Ranks, f.Shared, present, f)
	if claims == "" {
		claims = "(nothing: goring was not faster than the layer UCC would run at any size)"
	}
	fmt.Fprintf(w, "claims with layers %s: %s\n", strings.Join(present, ","), claims)
	return nil
}
