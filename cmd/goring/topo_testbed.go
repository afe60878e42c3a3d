package main

import (
	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/topo"
)

func init() { topoSubcommands = append(topoSubcommands, newTopoTestbedCmd) }

// newTopoTestbedCmd writes the topology of the network-namespace testbed
// (tests/netns/testbed.sh) from its parameters, for goring sim and
// goring bench --netns --topo.
func newTopoTestbedCmd() *cobra.Command {
	tb := topo.Testbed{}
	var (
		rate   string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "testbed --nodes N --ppn L --rails R --rate RATE [--rail-alpha US] [--copy-gbps G] [--copy-alpha US] [--json]",
		Short: "the network-namespace testbed's topology from its parameters (tc rate, measured start-up costs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gbps, err := topo.ParseTCRate(rate)
			if err != nil {
				return err
			}
			tb.RailGBps = gbps
			t, err := tb.Topology()
			if err != nil {
				return err
			}
			return printTopo(cmd.OutOrStdout(), t, asJSON)
		},
	}
	fl := c.Flags()
	fl.IntVar(&tb.Nodes, "nodes", 2, "node namespaces (testbed.sh NODES)")
	fl.IntVar(&tb.PPN, "ppn", 2, "ranks per node")
	fl.IntVar(&tb.Rails, "rails", 2, "rails (testbed.sh RAILS); rank i of a node owns rail i mod rails")
	fl.StringVar(&rate, "rate", "500mbit", "one rail's rate per direction, as tc writes it (testbed.sh RATE)")
	fl.Float64Var(&tb.RailAlphaUS, "rail-alpha", topo.TestbedRailAlphaUS, "a message's start-up cost over a rail, µs")
	fl.Float64Var(&tb.CopyGBps, "copy-gbps", topo.TestbedCopyGBps, "the machine's memory-copy throughput, shared by every rank (shared memory and TCP both copy), GB/s")
	fl.Float64Var(&tb.CopyAlphaUS, "copy-alpha", topo.TestbedCopyAlphaUS, "a message's start-up cost between two ranks of a node, µs")
	fl.BoolVar(&asJSON, "json", false, "print the goring.topo/v1 document")
	return c
}
