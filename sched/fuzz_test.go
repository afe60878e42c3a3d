package sched

import (
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// FuzzParseProgram: ParseProgram never panics, and what it accepts encodes
// back to a document it accepts again with the same encoding.
func FuzzParseProgram(f *testing.F) {
	f.Add([]byte(designExample))
	for _, spec := range []Spec{
		{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(2, 2), Bytes: 8, DtypeBytes: 4, Chunks: 2},
	} {
		plan, err := Generate(spec)
		if err != nil {
			f.Fatal(err)
		}
		data, err := MarshalProgram(plan)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema":"goring.program/v1","collective":"bcast","algorithm":"x","topology":"","nranks":1,"bytes":0,"dtype_bytes":1,"root":0,"counts":null,"buffers":[{"src":0,"dst":0,"scratch":0}],"ranks":[{"rank":0,"node":0,"local":0,"steps":[]}]}`))
	f.Add([]byte(`{"schema":"goring.program/v1","nranks":99999999999}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		plan, err := ParseProgram(data)
		if err != nil {
			return
		}
		out, err := MarshalProgram(plan)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseProgram(out)
		if err != nil {
			t.Fatalf("re-parse of own encoding failed: %v\n%s", err, out)
		}
		again, _ := MarshalProgram(back)
		if string(again) != string(out) {
			t.Fatalf("encoding not stable:\n%s\n%s", out, again)
		}
		_, _ = Verify(plan) // must not panic on any parsed plan
	})
}

// FuzzGenerate: over random topologies (1-64 nodes, 1-8 GPUs), sizes,
// dtypes, chunk counts and every registered algorithm, Generate either
// builds a plan that Verify proves, or returns a documented
// *UnsupportedError. Anything else (another error, a panic, a plan that
// fails verification) is a bug.
func FuzzGenerate(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(3), uint32(7), uint8(2), uint8(0), uint8(0))
	f.Add(uint8(1), uint8(4), uint8(1), uint32(1), uint8(3), uint8(4), uint8(1))
	f.Add(uint8(2), uint8(15), uint8(3), uint32(1000), uint8(0), uint8(1), uint8(2))
	f.Add(uint8(3), uint8(6), uint8(7), uint32(33), uint8(1), uint8(2), uint8(3))
	f.Add(uint8(4), uint8(63), uint8(3), uint32(5), uint8(2), uint8(0), uint8(4))
	f.Add(uint8(0), uint8(9), uint8(4), uint32(100), uint8(3), uint8(5), uint8(5))
	f.Fuzz(func(t *testing.T, collSel, nodes8, gpus8 uint8, elems uint32, dsel, chunks8, algSel uint8) {
		colls := []coll.Collective{coll.Allgather, coll.ReduceScatter, coll.Allreduce, coll.Alltoallv, coll.Bcast}
		c := colls[int(collSel)%len(colls)]
		algs := Algorithms(c)
		if len(algs) == 0 {
			return
		}
		alg := algs[int(algSel)%len(algs)]
		nodes, gpus := int(nodes8)%64+1, int(gpus8)%8+1
		if nodes*gpus > 128 && (c == coll.Alltoallv || alg.Name == "ring" || alg.Name == "neighbor") {
			nodes = 128 / gpus // quadratic plans: keep one fuzz run quick
		}
		dtype := []int{1, 2, 4, 8}[int(dsel)%4]
		spec := Spec{Collective: c, Algorithm: alg.Name, Topo: topo.SweepShape(nodes, gpus),
			Bytes: int64(elems%4096+1) * int64(dtype), DtypeBytes: dtype, Chunks: int(chunks8 % 6)}
		if c == coll.Bcast {
			spec.Root = int(elems) % (nodes * gpus)
		}
		if c == coll.Alltoallv && elems%3 == 0 {
			n := nodes * gpus
			spec.Counts = make([][]int64, n)
			for i := range spec.Counts {
				spec.Counts[i] = make([]int64, n)
				for j := range spec.Counts[i] {
					spec.Counts[i][j] = int64((uint32(i*31+j*17)^elems)%7) * int64(dtype)
				}
			}
		}
		plan, err := Generate(spec)
		if err != nil {
			if !IsUnsupported(err) {
				t.Fatalf("%s/%s on %dx%d, %d bytes: %v", c, alg.Name, nodes, gpus, spec.Bytes, err)
			}
			return
		}
		if _, err := Verify(plan); err != nil {
			t.Fatalf("%s/%s on %dx%d, %d bytes, dtype %d, chunks %d: %v", c, alg.Name, nodes, gpus, spec.Bytes, dtype, spec.Chunks, err)
		}
	})
}
