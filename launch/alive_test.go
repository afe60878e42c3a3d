package launch

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAlive(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	self := os.Getpid()
	start, err := ProcStart(self)
	require.NoError(t, err)
	ok, err := Alive(self, start)
	require.NoError(t, err)
	assert.True(t, ok, "this process")
	ok, err = Alive(self, start+1)
	require.NoError(t, err)
	assert.False(t, ok, "same pid, other start time: a reused pid")

	// A child that exits is dead as a zombie (not yet waited for) and
	// after it is reaped.
	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	cstart, err := ProcStart(pid)
	if err != nil { // already gone and reaped by nobody: impossible before Wait
		t.Fatalf("start of child %d: %v", pid, err)
	}
	for {
		ok, err = Alive(pid, cstart)
		require.NoError(t, err)
		if !ok {
			break // zombie
		}
	}
	require.NoError(t, cmd.Wait())
	ok, err = Alive(pid, cstart)
	require.NoError(t, err)
	assert.False(t, ok, "reaped child")
	ok, err = Alive(0, 1)
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestProcStatCommandWithParens(t *testing.T) {
	// The command name may contain ") (": fields are counted from the
	// last parenthesis. A copy of sleep named so proves it.
	dir := t.TempDir()
	bin, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	name := dir + "/a) (b"
	data, err := os.ReadFile(bin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(name, data, 0o755))
	cmd := exec.Command(name, "5")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	start, err := ProcStart(cmd.Process.Pid)
	require.NoError(t, err)
	ok, err := Alive(cmd.Process.Pid, start)
	require.NoError(t, err)
	assert.True(t, ok)
}
