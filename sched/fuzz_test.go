package sched

import (
	"testing"

	"github.com/goring-hpc/goring/coll"
)

// FuzzParseProgram: ParseProgram never panics, and what it accepts encodes
// back to a document it accepts again with the same encoding.
func FuzzParseProgram(f *testing.F) {
	f.Add([]byte(designExample))
	for _, spec := range []Spec{
		{Collective: coll.Allgather, Algorithm: "ring", Topo: synthTopo(2, 2), Bytes: 8, DtypeBytes: 4, Chunks: 2},
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
