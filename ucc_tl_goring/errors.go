//go:build ucc

package main

import "sync"

// lastError is the text of the latest error of this process, for
// goring_last_error (UCC calls from one progress thread at a time, and the
// text is for logs, so one slot is enough).
var lastError struct {
	sync.Mutex
	text string
}

func setLastError(err error) {
	lastError.Lock()
	lastError.text = "goring: " + err.Error()
	lastError.Unlock()
}

func getLastError() string {
	lastError.Lock()
	defer lastError.Unlock()
	return lastError.text
}
