// Package fakedev is a fake GPU for the tests of code that moves device
// memory without a GPU: its memory lives in an arena of its own, behind
// addresses that are not host pointers, and its local executor runs copies
// and reductions later (at Poll), a few at a time, in an order of its
// choosing, as a device stream with events would report them.
//
// It exists so that a host-only shortcut fails a test: exec.Region.Bytes
// panics on its memory, the in-memory transport refuses it without the
// arena's Copy, and a result is only visible after Read. Every algorithm's
// contents test runs over it as well as over host memory.
//
//	a := fakedev.New(1)                     // seed of the completion order
//	r := a.Alloc(0, 4096)                   // 4 KiB on fake device 0
//	_ = a.Write(r, data)                    // host -> device
//	local := a.Local()                      // an exec.AsyncLocal
//	out, _ := a.Read(r)                     // device -> host
package fakedev
