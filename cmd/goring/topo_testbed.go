package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/topo"
)

func init() { topoSubcommands = append(topoSubcommands, newTopoTestbedCmd) }

// newTopoTestbedCmd writes the topology of the network-namespace testbed
// (tests/netns/testbed.sh) from its parameters, for goring sim and
// goring bench --netns --topo. --gpu gives the GPU form, the testbed of a
// --mem cuda run (topo.TestbedGPU).
func newTopoTestbedCmd() *cobra.Command {
	tb := topo.Testbed{}
	g := topo.DefaultTestbedGPU()
	var (
		rate   string
		gpu    bool
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "testbed --nodes N --ppn L --rails R --rate RATE [--rail-alpha US] [--copy-gbps G] [--copy-alpha US] [--gpu [--nvlink-gbps G] ...] [--json]",
		Short: "the network-namespace testbed's topology from its parameters (tc rate, measured start-up costs)",
		Long: `testbed writes the topology of the network-namespace testbed
(tests/netns/testbed.sh, docs/netns.md) for goring sim.

Host form (the default): every byte a rank moves, to its node or to its rail,
is a CPU copy at the rank's share of --copy-gbps.

GPU form (--gpu), the testbed of goring bench --netns --mem cuda: a node's
ranks are GPUs joined by NVLink (--nvlink-gbps per GPU each way, through the
node's NVSwitch); a rank's rail bytes are staged over PCIe into pinned host
memory (--stage-gbps) and copied by TCP, so --copy-gbps is shared by the
rail bytes only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gbps, err := topo.ParseTCRate(rate)
			if err != nil {
				return err
			}
			tb.RailGBps = gbps
			if gpu {
				tb.GPU = &g
			} else if cmd.Flags().Changed("gpu-model") || cmd.Flags().Changed("nvlink-gbps") || cmd.Flags().Changed("nvlink-alpha") ||
				cmd.Flags().Changed("stage-gbps") || cmd.Flags().Changed("stage-alpha") {
				return errors.New("--gpu-model, --nvlink-* and --stage-* describe the GPU form: add --gpu")
			}
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
	fl.BoolVar(&gpu, "gpu", false, "the GPU form: the testbed of a --mem cuda run (ranks are GPUs joined by NVLink; the CPU copies rail bytes only)")
	fl.StringVar(&g.Model, "gpu-model", g.Model, "with --gpu: the GPUs' model (the simulator's local copy and reduction rates)")
	fl.Float64Var(&g.NVLinkGBps, "nvlink-gbps", g.NVLinkGBps, "with --gpu: what one GPU moves to the others of its node over NVLink, each way, GB/s (goring's push engine on four H200s)")
	fl.Float64Var(&g.NVLinkAlphaUS, "nvlink-alpha", g.NVLinkAlphaUS, "with --gpu: one push's start-up cost over NVLink, µs")
	fl.Float64Var(&g.StageGBps, "stage-gbps", g.StageGBps, "with --gpu: the staging copy between a GPU and pinned host memory, one direction, GB/s (PCIe Gen5 x16)")
	fl.Float64Var(&g.StageAlphaUS, "stage-alpha", g.StageAlphaUS, "with --gpu: the staging copy's start-up cost, µs")
	fl.BoolVar(&asJSON, "json", false, "print the goring.topo/v1 document")
	return c
}
