package tune

import "fmt"

// Layer is what one collective layer's software adds to the transfers of
// the algorithm it runs: a cost once per call (entry, lookup, completion)
// and one per message between two ranks (posting, matching, a
// rendezvous), both in microseconds. The links' own startups and rates
// are the regime's and the same for every layer.
type Layer struct {
	Name      string
	CallUS    float64
	MessageUS float64
}

func (l Layer) validate() error {
	if l.CallUS < 0 || l.MessageUS < 0 {
		return fmt.Errorf("tune: layer %s: call %g us, message %g us: want costs not negative", l.Name, l.CallUS, l.MessageUS)
	}
	return nil
}

// The layers' costs on host memory, measured through Open MPI's coll/ucc
// on the 2-core development machine, 2 ranks, back to back (docs/ucc.md
// "Small collectives in C"): a 4-64 B allreduce (one message per rank)
// took 0.31-0.34 us with tl/ucp and 0.36-0.41 us in goring's C path, and
// a 16-float allreduce 3.4-3.7 us in goring's Go path (cpath_max=0). The
// message cost is UCX's, shared by all three; the call costs are the
// rest.
var (
	HostUCP      = Layer{Name: "tl/ucp", CallUS: 0.07, MessageUS: 0.25}
	HostGoringC  = Layer{Name: "goring (C path)", CallUS: 0.13, MessageUS: 0.25}
	HostGoringGo = Layer{Name: "goring (Go path)", CallUS: 3.2, MessageUS: 0.25}
)

// The layers' costs on CUDA memory between processes of one host.
// goring's push engine pays a copy launch and two small host messages per
// transfer: its direct push started in 37.4 us on two H100 (docs/gpu.md,
// "One transfer over several paths on two GPUs", the fitted alpha).
// tl/ucp's messages go through UCX's cuda_ipc rendezvous, which took
// about 140 us a message between two processes on one H100 (docs/gpu.md
// "goring's own CUDA IPC push") and 68 us more than the push at 8 MiB
// between two H100 (126 against 58 us, same section as above): 105 us
// here. A call costs each layer about the same (a few us of host work)
// next to these.
var (
	CUDAUCP    = Layer{Name: "tl/ucp", CallUS: 5, MessageUS: 105}
	CUDAGoring = Layer{Name: "goring (push)", CallUS: 5, MessageUS: 37}
)
