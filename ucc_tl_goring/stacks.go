//go:build ucc

package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

// GORING_STACKS_AFTER=D (a Go duration: 30s) prints every goroutine's
// stack of the library's Go side to stderr once, D after the process's
// first goring context: where a job that hangs inside goring waits. A
// goroutine in C (UCX, CUDA) shows the Go call that entered it, above
// runtime.cgocall.
var stacksOnce sync.Once

func stacksAfter() {
	v := os.Getenv("GORING_STACKS_AFTER")
	if v == "" {
		return
	}
	stacksOnce.Do(func() {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			fmt.Fprintf(os.Stderr, "goring: GORING_STACKS_AFTER=%q: want a positive duration such as 30s\n", v)
			return
		}
		go func() {
			time.Sleep(d)
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			fmt.Fprintf(os.Stderr, "goring: process %d, stacks %v after its first context:\n%s\n", os.Getpid(), d, buf[:n])
		}()
	})
}
