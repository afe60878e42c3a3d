package sched

import (
	"fmt"
	"testing"

	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/nimble"
	"github.com/goring-hpc/goring/topo"
)

// The planner's time on MoE dispatch demands (NIMBLE section V-D reports
// 32-48 us for its 8 GPUs): 2 x 4 and 16 x 4 GPUs of clusterB, 256
// tokens of 8 KiB per rank, top-8 of 64 experts, expert 0 hot (70%).
func BenchmarkMoEPlanner(b *testing.B) {
	for _, nodes := range []int{2, 16} {
		one, err := topo.Preset("clusterB")
		if err != nil {
			b.Fatal(err)
		}
		t, err := one.Repeat(nodes)
		if err != nil {
			b.Fatal(err)
		}
		n := t.NumGPUs()
		r, err := moe.Generate(moe.Options{NRanks: n, TokensPerRank: 256, TokenBytes: 8192, TopK: 8, Experts: 64, Hot: map[int]float64{0: 0.7}, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		lay, err := moe.NewLayout(r)
		if err != nil {
			b.Fatal(err)
		}
		demand := MoEDemand(lay)
		pl, err := nimble.NewPlanner(t)
		if err != nil {
			b.Fatal(err)
		}
		// A framework builds the planner once per topology and plans
		// every layer's routing with it.
		b.Run(fmt.Sprintf("%dranks", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := pl.Plan(demand, nimble.MWUOptions{ElemBytes: 8192}); err != nil {
					b.Fatal(err)
				}
			}
		})
		// From scratch: the network and every pair's paths too.
		b.Run(fmt.Sprintf("%dranks-cold", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := nimble.PlanMWU(t, demand, nimble.MWUOptions{ElemBytes: 8192}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
