package launch

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test binary doubles as a rank: RunLocal and mpirun start it again
// with LAUNCH_TEST_WORKER set.
func TestMain(m *testing.M) {
	// The main goroutine keeps the main thread, which the runtime never
	// ends: every test then runs on threads that can end
	// (TestSpawnRanksSurviveThreadsEnding).
	runtime.LockOSThread()
	if os.Getenv("LAUNCH_TEST_WORKER") != "" {
		os.Exit(testWorker())
	}
	// LAUNCH_TEST_WORKER_FROM=r: ranks r and above are workers, those
	// below run no test and exit 0 at once.
	if from := envOr("LAUNCH_TEST_WORKER_FROM", -1); from >= 0 && envOr(EnvRank, -1) >= from {
		os.Exit(testWorker())
	}
	os.Exit(m.Run())
}

func envOr(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// testWorker joins, checks the table and gathers, runs barriers, and dies
// or stalls on request. On a job failure it records the error in
// LAUNCH_TEST_DIR/rank-N and exits 7.
func testWorker() int {
	role, err := FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	// The watcher and the main goroutine may both see the failure: the
	// first records it, the other waits (so an exit cannot cut a write).
	var recordMu sync.Mutex
	recorded := false
	record := func(msg string) {
		recordMu.Lock()
		defer recordMu.Unlock()
		if d := os.Getenv("LAUNCH_TEST_DIR"); d != "" && !recorded {
			recorded = true
			_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("rank-%d", role.Rank)), []byte(msg), 0o600)
		}
	}
	// LAUNCH_TEST_WAIT_FILE: stay before the join until this file exists.
	if f := os.Getenv("LAUNCH_TEST_WAIT_FILE"); f != "" {
		for {
			if _, err := os.Stat(f); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	host, _ := os.Hostname()
	ctx := context.Background()
	s, err := Start(ctx, role, Peer{Host: host, Node: role.Rank / 2, Local: role.Rank % 2, Payload: []byte(fmt.Sprintf("addr-%d", role.Rank))}, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		record(err.Error())
		return 3
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-s.Failed():
			record(s.Err().Error())
			fmt.Fprintf(os.Stderr, "worker rank %d: %v\n", role.Rank, s.Err())
			recordMu.Lock() // hold it: no write may start after this
			os.Exit(7)
		case <-done:
		}
	}()
	for r, p := range s.Peers() {
		if string(p.Payload) != fmt.Sprintf("addr-%d", r) || p.Node != r/2 || p.Local != r%2 {
			fmt.Fprintf(os.Stderr, "worker: bad table entry %d: %+v\n", r, p)
			return 4
		}
	}
	rounds := envOr("LAUNCH_TEST_ROUNDS", 5)
	for i := 0; i < rounds; i++ {
		if i == 2 && envOr("LAUNCH_TEST_DIE", -1) == role.Rank {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		if i == 2 && envOr("LAUNCH_TEST_STALL", -1) == role.Rank {
			_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		}
		all, err := s.Allgather(ctx, []byte{byte(role.Rank), byte(i)})
		if err != nil {
			record(err.Error())
			return 5
		}
		for r, d := range all {
			if !bytes.Equal(d, []byte{byte(r), byte(i)}) {
				fmt.Fprintf(os.Stderr, "worker: gather %d from rank %d: %v\n", i, r, d)
				return 6
			}
		}
		time.Sleep(time.Duration(envOr("LAUNCH_TEST_SLEEP_MS", 0)) * time.Millisecond)
	}
	close(done)
	if role.Rank == 0 {
		fmt.Println("worker 0 done")
	}
	if envOr("LAUNCH_TEST_NOBYE", -1) == role.Rank {
		return 0 // leaves without saying bye
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "worker close:", err)
		return 8
	}
	return 0
}

func testExe(t *testing.T) string {
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

func TestRunLocalCompletes(t *testing.T) {
	for i, np := range []int{1, 2, 5} {
		var out, errb bytes.Buffer
		err := RunLocal(context.Background(), LocalJob{NP: np, Exe: testExe(t), Args: []string{"-test.run=^$"},
			Env: []string{"LAUNCH_TEST_WORKER=1"}, Stdout: &out, Stderr: &errb})
		require.NoError(t, err, "case %d: stderr %s", i, errb.String())
		assert.Equal(t, "worker 0 done\n", out.String(), "case %d", i)
	}
}

// A rank killed mid-run: the launcher names it, every other rank exits
// non-zero naming it, all within 10 s.
func TestKilledRankFailsEveryone(t *testing.T) {
	cases := []struct {
		env     string
		victim  int
		wantMsg string // a regexp: the coordinator or the exit status may tell first
	}{
		{"LAUNCH_TEST_DIE=2", 2, "connection lost|signal: killed"},
		{"LAUNCH_TEST_DIE=0", 0, "connection lost|signal: killed"},
		{"LAUNCH_TEST_STALL=1", 1, "no heartbeat"},
	}
	for i, c := range cases {
		dir := t.TempDir()
		var errb bytes.Buffer
		start := time.Now()
		err := RunLocal(context.Background(), LocalJob{NP: 4, Exe: testExe(t), Args: []string{"-test.run=^$"},
			Env:    []string{"LAUNCH_TEST_WORKER=1", "LAUNCH_TEST_ROUNDS=1000", "LAUNCH_TEST_SLEEP_MS=20", c.env, "LAUNCH_TEST_DIR=" + dir},
			Stderr: &errb, Grace: 3 * time.Second, Options: Options{HeartbeatTimeout: 3 * time.Second}})
		elapsed := time.Since(start)
		require.Error(t, err, "case %d", i)
		assert.Less(t, elapsed, 10*time.Second, "case %d", i)
		rank, ok := FailedRank(err)
		require.True(t, ok, "case %d: %v", i, err)
		assert.Equal(t, c.victim, rank, "case %d: %v", i, err)
		assert.Regexp(t, c.wantMsg, err.Error(), "case %d", i)
		for r := 0; r < 4; r++ {
			if r == c.victim {
				continue
			}
			msg, rerr := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank-%d", r)))
			require.NoError(t, rerr, "case %d: rank %d recorded no failure; stderr %s", i, r, errb.String())
			assert.Contains(t, string(msg), fmt.Sprintf("rank %d failed", c.victim), "case %d rank %d", i, r)
		}
	}
}

func rawHello(t *testing.T, addr string, m *message) *message {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, writeFrame(conn, m, time.Now().Add(time.Second)))
	r, err := readFrame(conn, time.Now().Add(2*time.Second))
	require.NoError(t, err)
	return r
}

func TestCoordinatorRejectsBadHellos(t *testing.T) {
	token := strings.Repeat("a", 32)
	c, err := NewCoordinator("127.0.0.1:0", token, 2, Options{JoinTimeout: 3 * time.Second})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- c.Serve(context.Background()) }()
	peer := &Peer{Host: "h"}
	cases := []struct {
		m    *message
		want string
	}{
		{&message{Type: msgHello, Version: ProtocolVersion, Token: "wrong", Rank: 0, Size: 2, Peer: peer}, "bad job token"},
		{&message{Type: msgHello, Version: 99, Token: token, Rank: 0, Size: 2, Peer: peer}, "protocol version 99"},
		{&message{Type: msgHello, Version: ProtocolVersion, Token: token, Rank: 5, Size: 2, Peer: peer}, "out of range"},
		{&message{Type: msgHello, Version: ProtocolVersion, Token: token, Rank: 0, Size: 3, Peer: peer}, "expects 2"},
		{&message{Type: msgGather, Version: ProtocolVersion, Token: token, Rank: 0, Size: 2}, "expected hello"},
		{&message{Type: msgHello, Version: ProtocolVersion, Token: token, Rank: 0, Size: 2}, "without locality"},
	}
	for i, tc := range cases {
		r := rawHello(t, c.Addr(), tc.m)
		assert.Equal(t, msgError, r.Type, "case %d", i)
		assert.Contains(t, r.Err, tc.want, "case %d", i)
	}
	// Malformed frames: garbage JSON, and a length over the limit.
	for i, raw := range [][]byte{
		append([]byte{0, 0, 0, 5}, []byte("{nope")...),
		{0xff, 0xff, 0xff, 0xff},
		append([]byte{0, 0, 0, 17}, []byte(`{"type":"what"}xx`)...),
	} {
		conn, err := net.Dial("tcp", c.Addr())
		require.NoError(t, err)
		_, err = conn.Write(raw)
		require.NoError(t, err)
		r, err := readFrame(conn, time.Now().Add(2*time.Second))
		require.NoError(t, err, "raw case %d", i)
		assert.Equal(t, msgError, r.Type, "raw case %d", i)
		assert.Contains(t, r.Err, "malformed", "raw case %d", i)
		conn.Close()
	}
	// Nobody valid joined: the join deadline fails the job naming rank 0
	// and listing the rejections.
	err = <-done
	rank, ok := FailedRank(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, 0, rank)
	assert.Contains(t, err.Error(), "bad job token")
}

func TestDuplicateRankRejected(t *testing.T) {
	token := strings.Repeat("b", 32)
	c, err := NewCoordinator("127.0.0.1:0", token, 2, Options{JoinTimeout: 5 * time.Second})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Serve(ctx) }()
	conn, err := net.Dial("tcp", c.Addr())
	require.NoError(t, err)
	defer conn.Close()
	hello := &message{Type: msgHello, Version: ProtocolVersion, Token: token, Rank: 1, Size: 2, Peer: &Peer{}}
	require.NoError(t, writeFrame(conn, hello, time.Now().Add(time.Second)))
	require.Eventually(t, func() bool { return len(c.missing()) == 1 }, 2*time.Second, 5*time.Millisecond)
	r := rawHello(t, c.Addr(), hello)
	assert.Contains(t, r.Err, "joined twice")
}

func TestFrameLimitOnWrite(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	err := writeFrame(a, &message{Type: msgGather, Data: make([]byte, MaxFrameBytes)}, time.Now().Add(time.Second))
	assert.ErrorIs(t, err, errFrameTooLarge)
}

func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"type":"hello","version":1,"token":"x","rank":0,"size":2,"peer":{"host":"h"}}`))
	f.Add([]byte(`{"type":"gathered","seq":3,"all":["AA==",""]}`))
	f.Add([]byte(`{"type":`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := decodeMessage(body)
		if err == nil && m.Type == "" {
			t.Fatalf("accepted a message without type: %q", body)
		}
	})
}

func TestReadFrameShortHeader(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	go func() {
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], 10)
		_, _ = a.Write(hdr[:])
		_, _ = a.Write([]byte("{}"))
		a.Close()
	}()
	_, err := readFrame(b, time.Now().Add(time.Second))
	assert.Error(t, err)
}

// The same worker under Debian's mpirun: rank 0 hosts the coordinator and
// publishes it through the rendezvous file.
func TestUnderMpirun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no mpirun run")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not installed")
	}
	for i, extra := range [][]string{nil, {"GORING_TOKEN=" + strings.Repeat("c", 32)}} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, mpirun, "-np", "4", "--allow-run-as-root", "--oversubscribe", testExe(t), "-test.run=^$")
		cmd.Env = append(cleanEnv(), "LAUNCH_TEST_WORKER=1")
		cmd.Env = append(cmd.Env, extra...)
		out, err := cmd.CombinedOutput()
		cancel()
		require.NoError(t, err, "case %d: %s", i, out)
		assert.Contains(t, string(out), "worker 0 done", "case %d", i)
	}
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORING_") && !strings.HasPrefix(kv, "OMPI_") && !strings.HasPrefix(kv, "PMIX_") {
			env = append(env, kv)
		}
	}
	return env
}

// Heartbeats flowing while ranks are still joining must not reach a rank
// before its welcome (a race seen with 8 ranks on a loaded machine).
func TestJoinWhileHeartbeating(t *testing.T) {
	token := strings.Repeat("d", 32)
	opt := Options{HeartbeatInterval: time.Millisecond, HeartbeatTimeout: 2 * time.Second, JoinTimeout: 10 * time.Second}
	const n = 8
	c, err := NewCoordinator("127.0.0.1:0", token, n, opt)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- c.Serve(context.Background()) }()
	errs := make(chan error, n)
	for r := 0; r < n; r++ {
		go func(r int) {
			time.Sleep(time.Duration(r*7) * time.Millisecond)
			cl, err := Join(context.Background(), JoinConfig{Addr: c.Addr(), Token: token, Rank: r, Size: n, Host: "h", Options: opt})
			if err == nil {
				err = cl.Barrier(context.Background())
			}
			if err == nil {
				err = cl.Close()
			}
			errs <- err
		}(r)
	}
	for r := 0; r < n; r++ {
		require.NoError(t, <-errs)
	}
	require.NoError(t, <-served)
}
