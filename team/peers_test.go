package team

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/ucx"
)

// These tests run each rank in its own process, as MPI does: the test
// binary starts copies of itself with GORING_TL_CHILD set, which meet
// through card files in a folder. A late rank must be waited for (MPI lets
// a rank enter a collective as late as it likes); a rank that dies must
// end the collective on the others, naming it, without a launcher's help.

const childEnv = "GORING_TL_CHILD" // "rank,size,dir,mode"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		// Only the node tests' ranks take the node path on a shared GPU:
		// the shared-GPU tests' ranks (modes "gpu", "gpu-pool") must run
		// the leader there, as a team of ranks sharing a GPU does.
		f := strings.SplitN(spec, ",", 4)
		nodeOnSharedGPU = os.Getenv(envOneGPURanks) != "" && len(f) == 4 && strings.HasPrefix(f[3], "node-")
		if err := runChild(spec); err != nil {
			fmt.Println("child error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild is one rank: connect through the folder, then run mode's
// collective: "late:D" (the last rank sleeps D first), "die" (the last
// rank waits to be killed; the others report the error they get), "die-c"
// (the same with a small allreduce in the C path, see dieInC), "gpu" and
// "gpu-pool" (CUDA buffers on one shared GPU, see sharedGPUChild),
// "node-ok", "node-die", "node-late:D" and "node-timeout" (a GPU each,
// node kernels: nodeFaultChild), "node-stream" (node calls on the caller's stream:
// nodeStreamChild), "node-bcast" (bcasts on the node kernels:
// nodeBcastChild), "node-misaligned" (reductions with one rank's buffers
// off their elements' alignment: nodeMisalignedChild).
func runChild(spec string) error {
	f := strings.SplitN(spec, ",", 4)
	rank, _ := strconv.Atoi(f[0])
	size, _ := strconv.Atoi(f[1])
	dir, mode := f[2], f[3]
	opts := ""
	switch mode {
	case "node-misaligned":
		opts = "node_max=4M" // slots of 4 MiB: its largest allreduce runs in pieces
	case "node-timeout":
		opts = fmt.Sprintf("timeout_ms=%d", nodeTimeout.Milliseconds())
	}
	ctx, err := NewContext(opts, testTable{})
	if err != nil {
		return err
	}
	t, err := NewTeam(ctx, rank, size)
	if err != nil {
		return err
	}
	if err := exchangeCards(t, dir); err != nil {
		return err
	}
	last := rank == size-1
	if mode == "die-c" {
		return dieInC(t, ctx, rank, size, dir)
	}
	if mode == "gpu" || mode == "gpu-pool" {
		return sharedGPUChild(t, ctx, rank, size, dir, mode == "gpu-pool")
	}
	if mode == "node-stream" {
		return nodeStreamChild(t, ctx, rank, size, dir)
	}
	if mode == "node-bcast" {
		return nodeBcastChild(t, ctx, rank, size, dir)
	}
	if mode == "node-misaligned" {
		return nodeMisalignedChild(t, ctx, rank, size, dir)
	}
	if strings.HasPrefix(mode, "node-") {
		return nodeFaultChild(t, ctx, rank, size, dir, mode)
	}
	if mode == "die" && last {
		_ = os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
		time.Sleep(time.Hour) // killed by the test
	}
	if d, ok := strings.CutPrefix(mode, "late:"); ok && last {
		late, _ := time.ParseDuration(d)
		time.Sleep(late)
	}
	const n = 1 << 20 // float32 elements, 4 MiB
	src, dst := ucx.Alloc(4*n), ucx.Alloc(4*n)
	fs := unsafe.Slice((*float32)(unsafe.Pointer(&src[0])), n)
	for i := range fs {
		fs[i] = float32(rank + i%7)
	}
	c, err := NewColl(t, Args{Coll: coll.Allreduce, Src: unsafe.Pointer(&src[0]), Dst: unsafe.Pointer(&dst[0]), Count: n, Dtype: coll.Float32, Op: coll.Sum})
	if err != nil {
		return err
	}
	start := time.Now()
	if err := c.Post(); err != nil {
		return err
	}
	for {
		done, err := c.Test()
		if err != nil {
			fmt.Printf("collective failed after %.1f s: %v\n", time.Since(start).Seconds(), err)
			c.Finalize()
			// Stay alive until the test has read every survivor's
			// verdict: a survivor that exits now would be one more dead
			// peer for the others to report.
			awaitExit(dir)
			return nil
		}
		if done {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	c.Finalize()
	fd := unsafe.Slice((*float32)(unsafe.Pointer(&dst[0])), n)
	for i, v := range fd {
		want := float32(size*(size-1)/2 + size*(i%7))
		if v != want {
			return fmt.Errorf("element %d = %v, want %v", i, v, want)
		}
	}
	fmt.Printf("collective done after %.1f s\n", time.Since(start).Seconds())
	// Leave together, as MPI ranks do (MPI_Finalize waits for every rank):
	// a rank that exits while a peer still finishes its last send would be
	// a dead peer to that one's watch.
	awaitExit(dir)
	if err := t.Destroy(); err != nil {
		return err
	}
	return ctx.Close()
}

// awaitExit waits (at most 60 s) for the test's word that every rank may
// leave: the file dir/exit.
func awaitExit(dir string) {
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "exit")); err == nil {
			return
		}
	}
}

// exchangeCards publishes t's card as dir/card.R and connects once every
// rank's card is there (written whole: to a temporary name, then renamed).
func exchangeCards(t *Team, dir string) error {
	tmp := filepath.Join(dir, fmt.Sprintf("tmp.%d", t.rank))
	if err := os.WriteFile(tmp, t.card, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("card.%d", t.rank))); err != nil {
		return err
	}
	cards := make([][]byte, t.size)
	slot := 0
	for deadline := time.Now().Add(30 * time.Second); ; {
		got := 0
		for r := range cards {
			if cards[r] == nil {
				cards[r], _ = os.ReadFile(filepath.Join(dir, fmt.Sprintf("card.%d", r)))
			}
			if cards[r] != nil {
				got++
				slot = max(slot, len(cards[r]))
			}
		}
		if got == t.size {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d cards after 30 s", got, t.size)
		}
		time.Sleep(10 * time.Millisecond)
	}
	all := make([]byte, t.size*slot)
	for r, c := range cards {
		copy(all[r*slot:], c)
	}
	return t.Connect(all, slot)
}

// syncBuffer is a bytes.Buffer that the test may read while a child's
// output is still being copied into it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRanks starts size child ranks in mode and returns them with their
// output buffers.
func startRanks(t *testing.T, size int, mode string) ([]*exec.Cmd, []*syncBuffer, string) {
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc to watch processes by: %v", err)
	}
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, size)
	outs := make([]*syncBuffer, size)
	for r := range cmds {
		outs[r] = &syncBuffer{}
		cmds[r] = exec.Command(os.Args[0], "-test.run=^$")
		cmds[r].Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d,%s,%s", childEnv, r, size, dir, mode))
		cmds[r].Stdout, cmds[r].Stderr = outs[r], outs[r]
		require.NoError(t, cmds[r].Start())
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			if c.ProcessState == nil {
				_ = c.Process.Kill()
				_ = c.Wait()
			}
		}
	})
	return cmds, outs, dir
}

// waitAll waits for the given ranks, failing the test after limit.
func waitAll(t *testing.T, cmds []*exec.Cmd, outs []*syncBuffer, limit time.Duration) {
	done := make(chan int, len(cmds))
	for r, c := range cmds {
		go func() { _ = c.Wait(); done <- r }()
	}
	timer := time.After(limit)
	for range cmds {
		select {
		case r := <-done:
			assert.True(t, cmds[r].ProcessState.Success(), "rank %d: %s", r, outs[r])
		case <-timer:
			for r, o := range outs {
				t.Logf("rank %d so far: %s", r, o)
			}
			t.Fatalf("ranks still running after %v: a collective hangs", limit)
		}
	}
}

// A rank 11 s late (past the 10 s every call used to get) is waited for:
// every rank completes with correct contents, none times out or fails.
func TestLateRankIsWaitedFor(t *testing.T) {
	if testing.Short() {
		t.Skip("11 s late rank; skipped with -short")
	}
	const late = 11 * time.Second
	cmds, outs, dir := startRanks(t, 3, "late:"+late.String())
	for deadline := time.Now().Add(late + 60*time.Second); ; time.Sleep(10 * time.Millisecond) {
		done := 0
		for _, o := range outs {
			if strings.Contains(o.String(), "collective ") {
				done++
			}
		}
		if done == len(outs) {
			break
		}
		require.True(t, time.Now().Before(deadline), "ranks still in the collective: %s | %s | %s", outs[0], outs[1], outs[2])
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit"), nil, 0o644))
	waitAll(t, cmds, outs, 60*time.Second)
	for r, o := range outs {
		assert.Contains(t, o.String(), "collective done", "rank %d", r)
		assert.NotContains(t, o.String(), "failed", "rank %d", r)
	}
}

// A rank killed while the others are in the collective ends it on them
// within seconds, with an error that names it; nobody hangs, and no
// launcher kills them for us.
func TestDeadRankEndsCollective(t *testing.T) {
	cmds, outs, dir := startRanks(t, 3, "die")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the rank to kill never connected: %s", outs[2])
	}
	time.Sleep(300 * time.Millisecond) // the others are in the collective by now
	killed := time.Now()
	require.NoError(t, cmds[2].Process.Kill()) // a zombie until reaped below
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if strings.Contains(outs[0].String(), "collective failed") && strings.Contains(outs[1].String(), "collective failed") {
			break
		}
		require.True(t, time.Now().Before(deadline), "survivors still in the collective 20 s after the kill: %s | %s", outs[0], outs[1])
	}
	t.Logf("others ended %.1f s after the kill", time.Since(killed).Seconds())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit"), nil, 0o644))
	waitAll(t, cmds[:2], outs[:2], 20*time.Second)
	for r := range 2 {
		o := outs[r].String()
		assert.Contains(t, o, "collective failed", "rank %d", r)
		assert.Contains(t, o, "rank 2", "rank %d: the error names the dead rank", r)
	}
}

// dieInC is mode "die-c": a 16-float allreduce runs once in Go on every
// rank, which lowers it into the team's C cache; then the last rank waits
// to be killed while the others run the same shape in the C executor as
// cpath.c does: test, and on each due peer check ask checkPeers, failing
// the call on its verdict.
func dieInC(t *Team, ctx *Context, rank, size int, dir string) error {
	const n = 16
	src, dst := ucx.Alloc(4*n), ucx.Alloc(4*n)
	a := Args{Coll: coll.Allreduce, Src: unsafe.Pointer(&src[0]), Dst: unsafe.Pointer(&dst[0]), Count: n, Dtype: coll.Float32, Op: coll.Sum}
	// goring.h's numbers for allreduce, float32 and sum, as cpath.c keys it.
	k := cexec.Key{Coll: 2, Dtype: 11, Op: 1, Count: n}
	c, err := NewColl(t, a)
	if err != nil {
		return err
	}
	t.OfferCPath(k, c, a)
	if err := c.Post(); err != nil {
		return err
	}
	for done := false; !done; {
		if done, err = c.Test(); err != nil {
			return err
		}
	}
	c.Finalize()
	if t.cpath == nil || !t.cpath.Has(k) {
		return fmt.Errorf("the allreduce was not lowered into C")
	}
	if rank == size-1 {
		_ = os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
		time.Sleep(time.Hour) // killed by the test
	}
	call, err := t.cpath.NewCall(k)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := call.Post(a.Src, a.Dst); err != nil {
		return err
	}
	for {
		switch call.Test() {
		case cexec.Done:
			return fmt.Errorf("the C call completed although rank %d is dead", size-1)
		case cexec.Failed:
			return call.Err()
		case cexec.Watch:
			if err := t.CheckPeers(); err != nil {
				call.Fail()
				call.Finalize()
				fmt.Printf("collective failed in C after %.1f s: %v\n", time.Since(start).Seconds(), err)
				awaitExit(dir)
				return nil
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// The same in the C path: a rank killed while the others wait in a C call
// ends it on them through the team's failure detector, naming it.
func TestDeadRankEndsCPathCall(t *testing.T) {
	cmds, outs, dir := startRanks(t, 3, "die-c")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the rank to kill never got ready: %s", outs[2])
	}
	time.Sleep(300 * time.Millisecond) // the others are in the C call by now
	require.NoError(t, cmds[2].Process.Kill())
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if strings.Contains(outs[0].String(), "collective failed in C") && strings.Contains(outs[1].String(), "collective failed in C") {
			break
		}
		require.True(t, time.Now().Before(deadline), "survivors still in the C call 20 s after the kill: %s | %s", outs[0], outs[1])
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit"), nil, 0o644))
	waitAll(t, cmds[:2], outs[:2], 20*time.Second)
	for r := range 2 {
		assert.Contains(t, outs[r].String(), "rank 2", "rank %d: the error names the dead rank", r)
	}
}
