package sim

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// Run generates the plan of spec with sched.Generate and simulates it over
// spec.Topo. The plan is returned too (its Note says what "auto" chose).
func Run(spec sched.Spec, opt Options) (*Result, *sched.Plan, error) {
	plan, err := sched.Generate(spec)
	if err != nil {
		return nil, nil, err
	}
	res, err := Simulate(spec.Topo, plan, opt)
	if err != nil {
		return nil, plan, err
	}
	return res, plan, nil
}

// BusBandwidthGBps is the bus bandwidth of nccl-tests (its PERFORMANCE.md):
// algbw = S / t, where S is the data the collective delivers as nccl-tests
// sizes it, times a factor that makes the figure comparable to link speed:
//
//	allgather, reduce_scatter: S = bytes * P, busbw = algbw * (P-1)/P
//	allreduce:                 S = bytes,     busbw = algbw * 2(P-1)/P
//	alltoallv (N per peer):    S = bytes * P, busbw = algbw * (P-1)/P
//	bcast:                     S = bytes,     busbw = algbw
//
// bytes has UCC's meaning (package coll): a rank's contribution for
// allgather, its output block for reduce_scatter, the vector for allreduce.
func BusBandwidthGBps(c coll.Collective, nranks int, bytes int64, us float64) (float64, error) {
	if us <= 0 || nranks < 1 {
		return 0, fmt.Errorf("bus bandwidth: need a positive time and rank count (got %g us, %d ranks)", us, nranks)
	}
	p := float64(nranks)
	b := float64(bytes)
	var size, factor float64
	switch c {
	case coll.Allgather, coll.ReduceScatter, coll.Alltoallv:
		size, factor = b*p, (p-1)/p
	case coll.Allreduce:
		size, factor = b, 2*(p-1)/p
	case coll.Bcast:
		size, factor = b, 1
	default:
		return 0, fmt.Errorf("bus bandwidth: no nccl-tests definition for %s", c)
	}
	algGBps := size / (us * 1e3) // bytes per us / 1e3 = GB/s
	return algGBps * factor, nil
}
