package launch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ProcStart returns when process pid started, in clock ticks since boot
// (field 22 of /proc/PID/stat). With the pid it names one process for good:
// a pid the kernel reuses for a new process comes with a new start time.
func ProcStart(pid int) (uint64, error) {
	_, start, err := procStat(pid)
	return start, err
}

// Alive reports whether the process pid that started at start (ProcStart)
// still runs. A zombie (killed, not yet reaped by its launcher), a process
// gone from the table and a reused pid are all dead. An error means the
// process table could not be read (no /proc), not that the process died.
func Alive(pid int, start uint64) (bool, error) {
	state, s, err := procStat(pid)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return s == start && state != 'Z' && state != 'X', nil
}

// procStat reads the state and start time of pid. The command name (field
// 2) is in parentheses and may hold spaces or parentheses itself, so the
// fields are counted from the last ')'.
func procStat(pid int) (state byte, start uint64, err error) {
	if pid <= 0 {
		return 0, 0, fmt.Errorf("pid %d: %w", pid, os.ErrNotExist)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), so field 22 (starttime) is f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(f))
	}
	start, err = strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	return f[0][0], start, nil
}
