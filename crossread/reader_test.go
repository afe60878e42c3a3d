package crossread

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/exec/reduce"
)

const crossChildEnv = "GORING_CROSSREAD_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(crossChildEnv) != "" {
		crossChild() // TestCrossReaderReadsAnotherProcess's other process
	}
	os.Exit(m.Run())
}

// crossChildLen is the child's buffer: float32 i*0.5+1 at element i.
const crossChildLen = 1<<20 + 12

func crossPattern(n int) []byte {
	b := make([]byte, n)
	for i := 0; i+4 <= n; i += 4 {
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(i/4)*0.5+1))
	}
	return b
}

// crossChild is the other process of TestCrossReaderReadsAnotherProcess
// (TestMain runs it when asked): it holds the pattern, says where, and
// exits when its stdin closes.
func crossChild() {
	b := crossPattern(crossChildLen)
	fmt.Printf("%d %d\n", os.Getpid(), uintptr(unsafe.Pointer(&b[0])))
	bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println(b[0]) // keeps b alive until stdin closes
	os.Exit(0)
}

func TestCrossReaderReadsAnotherProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crossChildEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	var pid int64
	var addr uint64
	_, err = fmt.Fscan(bufio.NewReader(stdout), &pid, &addr)
	require.NoError(t, err)

	r := &CrossReader{}
	want := crossPattern(crossChildLen)
	got := make([]byte, crossChildLen)
	if err := r.Read(got, pid, addr); err != nil {
		if errorsIsPerm(err) {
			t.Skipf("this kernel refuses cross-memory reads here: %v", err)
		}
		require.NoError(t, err)
	}
	assert.Equal(t, want, got)

	// A reduction of a local buffer (first: in place) and the child's
	// buffer twice, in pieces that do not divide it.
	local := crossPattern(crossChildLen)
	for i := 0; i < len(local); i += 4 {
		binary.LittleEndian.PutUint32(local[i:], math.Float32bits(float32(i%7)))
	}
	ref := append([]byte(nil), local...)
	require.NoError(t, reduce.Into(coll.Float32, coll.Sum, ref, want))
	require.NoError(t, reduce.Into(coll.Float32, coll.Sum, ref, want))
	localAddr := uint64(uintptr(unsafe.Pointer(&local[0])))
	job := direct.Job{Dst: local, Srcs: []direct.Operand{{Addr: localAddr}, {Pid: pid, Addr: addr}, {Pid: pid, Addr: addr}}}
	require.NoError(t, r.Run([]direct.Job{job}, 1, coll.Float32, coll.Sum))
	assert.Equal(t, ref, local)

	// Past the end of the child's buffer and beyond any mapping: a fault,
	// not garbage; a process that is not there: no such process.
	err = r.Read(make([]byte, 64), pid, 8)
	assert.ErrorIs(t, err, syscall.EFAULT)
	err = r.Read(make([]byte, 64), 1<<30, addr)
	assert.ErrorIs(t, err, syscall.ESRCH)
	err = r.Run([]direct.Job{{Dst: local[:64], Srcs: []direct.Operand{{Addr: localAddr}, {Addr: localAddr}}}}, 1, coll.Float32, coll.Band)
	assert.ErrorContains(t, err, "bitwise")

	// Jobs on the worker threads: copies of the child's buffer in parts,
	// and reductions of it with local data, from two callers at once (runs
	// take turns), each many times so that the workers sleep and wake.
	for round := 0; round < 3; round++ {
		done := make(chan error, 2)
		for caller := 0; caller < 2; caller++ {
			go func() {
				x := &CrossReader{}
				for k := 0; k < 20; k++ {
					got := make([]byte, crossChildLen)
					sum := crossPattern(crossChildLen)
					third := uint64(crossChildLen / 12 * 4)
					jobs := []direct.Job{
						{Dst: got[:third], Srcs: []direct.Operand{{Pid: pid, Addr: addr}}},
						{Dst: got[third:], Srcs: []direct.Operand{{Pid: pid, Addr: addr + third}}},
						{Dst: sum[:third], Srcs: []direct.Operand{{Addr: uint64(uintptr(unsafe.Pointer(&sum[0])))}, {Pid: pid, Addr: addr}}},
						{Dst: sum[third:], Srcs: []direct.Operand{{Addr: uint64(uintptr(unsafe.Pointer(&sum[third])))}, {Pid: pid, Addr: addr + third}}},
					}
					if err := x.Run(jobs, 3, coll.Float32, coll.Sum); err != nil {
						done <- err
						return
					}
					twice := crossPattern(crossChildLen)
					if err := reduce.Into(coll.Float32, coll.Sum, twice, want); err != nil {
						done <- err
						return
					}
					if !bytes.Equal(got, want) || !bytes.Equal(sum, twice) {
						done <- fmt.Errorf("round %d call %d: wrong contents", round, k)
						return
					}
				}
				done <- nil
			}()
		}
		require.NoError(t, <-done)
		require.NoError(t, <-done)
		time.Sleep(time.Millisecond) // past the workers' spin: they sleep
	}
	err = r.Run([]direct.Job{{Dst: make([]byte, 64), Srcs: []direct.Operand{{Pid: pid, Addr: 8}}}}, 2, coll.Uint8, coll.OpInvalid)
	assert.ErrorIs(t, err, syscall.EFAULT, "a job's error is the run's")

	// A reduction written out to the child: its buffer becomes the sum of
	// itself and the local one, which a read gives back.
	sum := make([]byte, crossChildLen)
	job = direct.Job{Dst: sum, Srcs: []direct.Operand{{Pid: pid, Addr: addr}, {Addr: localAddr}}, Outs: []direct.Operand{{Pid: pid, Addr: addr}}}
	require.NoError(t, r.Run([]direct.Job{job}, 1, coll.Float32, coll.Sum))
	back := make([]byte, crossChildLen)
	require.NoError(t, r.Read(back, pid, addr))
	assert.Equal(t, sum, back)
	ref = append([]byte(nil), want...)
	require.NoError(t, reduce.Into(coll.Float32, coll.Sum, ref, local))
	assert.Equal(t, ref, back)
}

func errorsIsPerm(err error) bool {
	var e syscall.Errno
	for u := err; u != nil; {
		if x, ok := u.(syscall.Errno); ok {
			e = x
			break
		}
		w, ok := u.(interface{ Unwrap() error })
		if !ok {
			break
		}
		u = w.Unwrap()
	}
	return e == syscall.EPERM || e == syscall.ENOSYS
}
