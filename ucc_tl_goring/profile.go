//go:build ucc

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
)

// GORING_CPUPROFILE_DIR=DIR (goring bench's ranks take the same) writes
// a CPU profile of the library's Go side (runtime/pprof) from the first
// context's creation to the last one's destruction, one file a process
// (DIR/goring.PID.pprof): where a call's host time goes inside goring,
// read with `go tool pprof build/libgoring.so FILE`. Time in C (UCX,
// CUDA, the C paths) shows as cgo calls.
var profile struct {
	sync.Mutex
	contexts int
	f        *os.File
}

func profileStart() {
	stacksAfter()
	dir := os.Getenv("GORING_CPUPROFILE_DIR")
	if dir == "" {
		return
	}
	profile.Lock()
	defer profile.Unlock()
	if profile.contexts++; profile.contexts > 1 {
		return
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("goring.%d.pprof", os.Getpid())))
	if err != nil {
		fmt.Fprintf(os.Stderr, "goring: GORING_CPUPROFILE_DIR: %v\n", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "goring: GORING_CPUPROFILE_DIR: %v\n", err)
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
