package cpumodel

import (
	"bytes"
	"fmt"

	"github.com/goring-hpc/goring/devsync"
)

// Reference is what rank's output of a call must be: the inputs reduced
// in rank order (rank 0 first), the rank's block of that, the blocks
// concatenated, or the root's input.
func Reference(cfg Config, call int, ins [][]byte, rank int) []byte {
	s := cfg.shape(call)
	fold := func() []byte {
		acc := append([]byte(nil), ins[0]...)
		for _, in := range ins[1:] {
			cfg.Reduce(acc, in)
		}
		return acc
	}
	switch s.Alg.Base() {
	case devsync.OneShotAllreduce, devsync.TwoShotAllreduce:
		return fold()
	case devsync.ReduceScatter:
		n, at := s.Count*s.ElemSize, rank*s.BlockStride()*s.ElemSize
		return fold()[at : at+n]
	case devsync.Allgather:
		return bytes.Join(ins, nil)
	}
	return append([]byte(nil), ins[s.Root]...)
}

// Check runs cfg on inputs and returns every way the run went wrong: a
// run error, stale reads, wait errors, and outputs that differ from
// Reference. Nil means the run was right.
func Check(cfg Config, inputs [][][]byte) []error {
	res, err := Run(cfg, inputs)
	if err != nil {
		return []error{err}
	}
	return Problems(cfg, inputs, res)
}

// Problems is Check on a finished run.
func Problems(cfg Config, inputs [][][]byte, res *Result) []error {
	var errs []error
	for _, s := range res.Stale {
		errs = append(errs, fmt.Errorf("stale read: %v", s))
	}
	errs = append(errs, res.Errs...)
	for c := range cfg.Calls {
		for r := range cfg.shape(c).Ranks {
			want := Reference(cfg, c, inputs[c], r)
			if got := res.Outputs[c][r]; !bytes.Equal(got, want) {
				errs = append(errs, fmt.Errorf("call %d rank %d: output differs from the rank-order reference at byte %d", c, r, firstDiff(got, want)))
			}
			switch seen := res.Seen[c][r]; {
			case len(res.Errs) > 0: // aborted: the host reads no output
			case seen == nil:
				errs = append(errs, fmt.Errorf("call %d rank %d: its done words never said the call ended", c, r))
			case !bytes.Equal(seen, want):
				errs = append(errs, fmt.Errorf("call %d rank %d: the output the host read when the done words said the call ended differs from the reference at byte %d", c, r, firstDiff(seen, want)))
			}
		}
	}
	return errs
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
