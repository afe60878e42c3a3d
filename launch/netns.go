package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// NetnsPath is where iproute2 keeps a named network namespace
// (ip netns add NAME).
func NetnsPath(name string) string { return filepath.Join("/var/run/netns", name) }

// InNetns runs fn with its OS thread inside the named network namespace:
// sockets fn creates belong to that namespace for their whole life, so a
// listener made here keeps accepting there after the thread has come back
// (the coordinator of goring bench --netns listens on node 0's rail 0 so).
// fn runs on a goroutine of its own, locked to its thread; if the thread
// cannot be brought back, it stays locked and dies with the goroutine
// rather than serve other goroutines in the wrong namespace.
func InNetns(name string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restored := false
		defer func() {
			if restored {
				runtime.UnlockOSThread()
			}
		}()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			restored = true
			done <- fmt.Errorf("netns %s: %w", name, err)
			return
		}
		defer self.Close()
		target, err := os.Open(NetnsPath(name))
		if err != nil {
			restored = true
			done <- fmt.Errorf("netns %s: %w (is the testbed up?)", name, err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			restored = true
			done <- fmt.Errorf("netns %s: setns: %w", name, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("netns %s: returning to this namespace: %w", name, err)
			return
		}
		restored = true
		done <- ferr
	}()
	return <-done
}
