package main

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/topo/detect"
)

func init() { subcommands = append(subcommands, newTopoCmd) }

// topoSubcommands are the constructors of "goring topo"'s subcommands.
var topoSubcommands = []func() *cobra.Command{newTopoShowCmd, newTopoDetectCmd}

func newTopoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "topo",
		Short: "show a topology preset or file, or detect this machine's",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, mk := range topoSubcommands {
		c.AddCommand(mk())
	}
	return c
}

func newTopoShowCmd() *cobra.Command {
	var (
		spec   string
		nodes  int
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "show --topo PRESET|FILE [--nodes N] [--json]",
		Short: "print a topology: a summary table, or the goring.topo/v1 document",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// loadTopo reads --nodes 0 as "as given"; on the command line
			// an explicit 0 is a mistake worth saying so.
			if cmd.Flags().Changed("nodes") && nodes < 1 {
				return fmt.Errorf("--nodes %d: want at least 1", nodes)
			}
			t, err := loadTopo(spec, nodes)
			if err != nil {
				return err
			}
			return printTopo(cmd.OutOrStdout(), t, asJSON)
		},
	}
	c.Flags().StringVar(&spec, "topo", "", "preset name ("+strings.Join(topo.PresetNames(), ", ")+") or goring.topo/v1 JSON file")
	c.Flags().IntVar(&nodes, "nodes", 0, "repeat the node N times (default: as given)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the goring.topo/v1 document")
	return c
}

func newTopoDetectCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "detect [--json]",
		Short: "describe this machine (GPUs and NVLinks through NVML, NUMA, sockets and NICs through /sys)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := detectTopo()
			if err != nil {
				if detect.IsNoDriver(err) {
					return withExit(3, err)
				}
				return fmt.Errorf("topo detect: %w", err)
			}
			return printTopo(cmd.OutOrStdout(), t, asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the goring.topo/v1 document")
	return c
}

// detectTopo is detect.Detect; tests replace it to drive the command
// without hardware.
var detectTopo = detect.Detect

// printTopo writes t as one JSON document or as the human tables.
func printTopo(w io.Writer, t *topo.Topology, asJSON bool) error {
	if asJSON {
		b, err := topo.Marshal(t)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	writeTopoTables(w, t)
	return nil
}

// writeTopoTables prints a node summary, then the GPUs and links of each
// distinct node (nodes that differ only by name are shown once), then the
// rails.
func writeTopoTables(w io.Writer, t *topo.Topology) {
	fmt.Fprintf(w, "# topology %s: %d node(s), %d GPU(s), %d rail(s)\n", t.Name, t.NumNodes(), t.NumGPUs(), len(t.Rails))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "node\tname\tsockets\tgpus\tnics\tlinks")
	for i, n := range t.Nodes {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\n", i, n.Name, n.Sockets, len(n.GPUs), len(n.NICs), len(n.Links))
	}
	tw.Flush()

	for i := 0; i < len(t.Nodes); i++ {
		same := i + 1
		for same < len(t.Nodes) && sameLayout(&t.Nodes[i], &t.Nodes[same]) {
			same++
		}
		label := fmt.Sprintf("node %d", i)
		if same-1 > i {
			label = fmt.Sprintf("nodes %d-%d", i, same-1)
		}
		n := &t.Nodes[i]
		fmt.Fprintf(w, "\n# GPUs of %s\n", label)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		shared := false // a "shared" column only where processes share a GPU (topo.SharedGPU)
		for _, g := range n.GPUs {
			shared = shared || g.Share > 1
		}
		head := "gpu\tmodel\tsocket\tnuma\trail\tpci_bus_id"
		if shared {
			head += "\tshared_by"
		}
		fmt.Fprintln(tw, head)
		for _, g := range n.GPUs {
			rail := "-"
			if g.Rail >= 0 {
				rail = fmt.Sprint(g.Rail)
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s", g.Index, dash(g.Model), g.Socket, g.NUMA, rail, dash(g.PCIBusID))
			if shared {
				fmt.Fprintf(tw, "\t%d", max(g.Share, 1))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		fmt.Fprintf(w, "\n# links of %s (GB/s per link and per bundle, one direction)\n", label)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "kind\ta\tb\tcount\talpha_us\tGB/s\ttotal_GB/s\tduplex")
		for _, l := range n.Links {
			duplex := "full"
			if !l.FullDuplex {
				duplex = "half"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%s\n", l.Kind, l.A, l.B, l.Count, l.AlphaUS, l.BetaGBps, l.BandwidthGBps(), duplex)
		}
		tw.Flush()
		i = same - 1
	}

	if len(t.Rails) > 0 {
		fmt.Fprintf(w, "\n# rails (GB/s per NIC port, one direction)\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "rail\talpha_us\tGB/s")
		for _, r := range t.Rails {
			fmt.Fprintf(tw, "%d\t%.2f\t%.2f\n", r.Index, r.AlphaUS, r.BetaGBps)
		}
		tw.Flush()
	}
}

// sameLayout says whether two nodes differ at most by name.
func sameLayout(a, b *topo.Node) bool {
	ca, cb := *a, *b
	ca.Name, cb.Name = "", ""
	return reflect.DeepEqual(ca, cb)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
