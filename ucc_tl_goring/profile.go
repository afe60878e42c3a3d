//go:build ucc

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
)

// GORING_CPUPROFILE=FILE writes a CPU profile of the library's Go side
// (runtime/pprof) from the first context's creation to the last one's
// destruction, one file a process (FILE.PID): where a call's host time
// goes inside goring, read with `go tool pprof build/libgoring.so
// FILE.PID`. Time in C (UCX, CUDA, the C paths) shows as cgo calls.
var profile struct {
	sync.Mutex
	contexts int
	f        *os.File
}

func profileStart() {
	path := os.Getenv("GORING_CPUPROFILE")
	if path == "" {
		return
	}
	profile.Lock()
	defer profile.Unlock()
	if profile.contexts++; profile.contexts > 1 {
		return
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "goring: GORING_CPUPROFILE: %v\n", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "goring: GORING_CPUPROFILE: %v\n", err)
		_ = f.Close()
		return
	}
	profile.f = f
}

func profileStop() {
	profile.Lock()
	defer profile.Unlock()
	if profile.contexts == 0 {
		return
	}
	if profile.contexts--; profile.contexts == 0 && profile.f != nil {
		pprof.StopCPUProfile()
		_ = profile.f.Close()
		profile.f = nil
	}
}
