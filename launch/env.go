package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Environment variables of a rank. RunLocal sets the GORING_ ones; under
// mpirun the OMPI_ ones come from Open MPI and the GORING_ ones are optional.
const (
	EnvRank      = "GORING_RANK"       // this process's rank (set by RunLocal)
	EnvSize      = "GORING_SIZE"       // number of ranks
	EnvLocalRank = "GORING_LOCAL_RANK" // rank among the processes of this host
	EnvCoord     = "GORING_COORD"      // coordinator host:port
	EnvToken     = "GORING_TOKEN"      // the job's secret
	EnvCoordFile = "GORING_COORD_FILE" // mpirun rendezvous file (see package doc)

	envOMPIRank      = "OMPI_COMM_WORLD_RANK"
	envOMPISize      = "OMPI_COMM_WORLD_SIZE"
	envOMPILocalRank = "OMPI_COMM_WORLD_LOCAL_RANK"
	envOMPIJobID     = "OMPI_MCA_ess_base_jobid"
	envPMIxNamespace = "PMIX_NAMESPACE"
)

// Role is how this process takes part in a job, as read from its
// environment.
type Role struct {
	Rank, Size, LocalRank int
	// Launcher is "goring" (started by RunLocal) or "mpirun".
	Launcher string
	// Coord is the coordinator address; empty under mpirun without
	// GORING_COORD, where CoordFile is the rendezvous.
	Coord     string
	CoordFile string
	Token     string
	// JobID tells this job's rendezvous file from a stale one.
	JobID string
}

// IsRank reports whether the environment says this process is a rank of a
// job (rather than a launcher).
func IsRank() bool {
	return os.Getenv(EnvRank) != "" || os.Getenv(envOMPIRank) != ""
}

func envInt(name string) (int, error) {
	v := os.Getenv(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want an integer", name, v)
	}
	return n, nil
}

// FromEnv reads the role of this process. It returns an error naming the
// variable when one is missing or malformed.
func FromEnv() (Role, error) {
	var r Role
	var err error
	switch {
	case os.Getenv(EnvRank) != "":
		r.Launcher = "goring"
		if r.Rank, err = envInt(EnvRank); err != nil {
			return r, err
		}
		if r.Size, err = envInt(EnvSize); err != nil {
			return r, err
		}
		r.LocalRank = r.Rank
		if os.Getenv(EnvLocalRank) != "" {
			if r.LocalRank, err = envInt(EnvLocalRank); err != nil {
				return r, err
			}
		}
		r.Coord = os.Getenv(EnvCoord)
		r.Token = os.Getenv(EnvToken)
		if r.Coord == "" || r.Token == "" {
			return r, fmt.Errorf("%s and %s must be set for a rank started with %s", EnvCoord, EnvToken, EnvRank)
		}
	case os.Getenv(envOMPIRank) != "":
		r.Launcher = "mpirun"
		if r.Rank, err = envInt(envOMPIRank); err != nil {
			return r, err
		}
		if r.Size, err = envInt(envOMPISize); err != nil {
			return r, err
		}
		if r.LocalRank, err = envInt(envOMPILocalRank); err != nil {
			return r, err
		}
		r.Coord = os.Getenv(EnvCoord)
		r.Token = os.Getenv(EnvToken)
		r.JobID = os.Getenv(envOMPIJobID)
		if r.JobID == "" {
			r.JobID = os.Getenv(envPMIxNamespace)
		}
		if r.Coord != "" && r.Token == "" {
			return r, fmt.Errorf("%s is set but %s is not: export a random token and pass it with mpirun -x %s", EnvCoord, EnvToken, EnvToken)
		}
		if r.Coord == "" {
			r.CoordFile = os.Getenv(EnvCoordFile)
			if r.CoordFile == "" {
				if r.JobID == "" {
					return r, fmt.Errorf("under mpirun without %s: no job id in %s or %s to name the rendezvous file; set %s", EnvCoord, envOMPIJobID, envPMIxNamespace, EnvCoordFile)
				}
				r.CoordFile = filepath.Join(os.TempDir(), fmt.Sprintf("goring-%d", os.Getuid()), r.JobID+".coord")
			}
		}
	default:
		return r, fmt.Errorf("not a rank: neither %s nor %s is set", EnvRank, envOMPIRank)
	}
	if r.Size < 1 || r.Rank < 0 || r.Rank >= r.Size {
		return r, fmt.Errorf("rank %d of %d: out of range", r.Rank, r.Size)
	}
	return r, nil
}

// NewToken returns a fresh random job token (32 hex digits).
func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Session is one rank's membership of a job: its client and, for rank 0
// under mpirun, the coordinator it hosts.
type Session struct {
	*Client
	coord     *Coordinator
	coordDone chan error
	coordFile string
	coordLine string // what rank 0 wrote in coordFile
	// rank0Coord: the coordinator runs inside rank 0 (mpirun), so losing
	// it is rank 0's failure and is reported so.
	rank0Coord bool
}

// Err is the job's failure, or nil (Client.Err, with the loss of a
// coordinator that rank 0 hosts naming rank 0).
func (s *Session) Err() error { return s.named(s.Client.Err()) }

// Allgather is Client.Allgather, its failure named as Err's.
func (s *Session) Allgather(ctx context.Context, data []byte) ([][]byte, error) {
	all, err := s.Client.Allgather(ctx, data)
	return all, s.named(err)
}

// Barrier is Client.Barrier, its failure named as Err's.
func (s *Session) Barrier(ctx context.Context) error { return s.named(s.Client.Barrier(ctx)) }

// named turns "lost the coordinator" into rank 0's failure where rank 0
// hosts it: the process that died or stalled is rank 0.
func (s *Session) named(err error) error {
	var f *RankFailedError
	if !s.rank0Coord || !errors.As(err, &f) || f.Rank >= 0 {
		return err
	}
	return &RankFailedError{Rank: 0, Reason: "lost the coordinator it hosts: " + f.Reason}
}

// Start joins the job of role with this rank's locality self (Rank is
// taken from role). Under mpirun, rank 0 first starts the coordinator and
// publishes it.
func Start(ctx context.Context, role Role, self Peer, opt Options) (*Session, error) {
	opt = opt.withDefaults()
	s := &Session{}
	addr, token := role.Coord, role.Token
	// reread: a rank that found the coordinator in the rendezvous file
	// reads it again when the address it read fails (see join).
	var reread func() (string, string, bool)
	if role.Launcher == "mpirun" {
		var err error
		if role.Rank == 0 {
			addr, token, err = s.host(ctx, role, opt)
		} else if role.Coord == "" {
			addr, token, err = waitRendezvous(ctx, role, opt.JoinTimeout)
			reread = func() (string, string, bool) {
				a, t, why := readRendezvous(role)
				return a, t, why == ""
			}
		}
		if err != nil {
			s.stopCoord()
			return nil, err
		}
	}
	c, err := join(ctx, JoinConfig{Addr: addr, Token: token, Rank: role.Rank, Size: role.Size,
		Host: self.Host, Node: self.Node, Local: self.Local, Payload: self.Payload, Options: opt}, reread)
	if err != nil {
		s.stopCoord()
		return nil, err
	}
	// Every rank has joined (the welcome needs them all), so nobody reads
	// the rendezvous file any more: rank 0 removes it now rather than at
	// Close, which a rank that exits on the job's failure never reaches.
	// A file left behind would be read by a later job given the same id.
	s.removeCoordFile()
	s.Client = c
	s.rank0Coord = role.Launcher == "mpirun" && role.Rank != 0
	return s, nil
}

// host starts the coordinator in this process (mpirun rank 0).
func (s *Session) host(ctx context.Context, role Role, opt Options) (addr, token string, err error) {
	token = role.Token
	if token == "" {
		if token, err = NewToken(); err != nil {
			return "", "", err
		}
	}
	bind := role.Coord
	if bind == "" {
		bind = "127.0.0.1:0"
	}
	coord, err := NewCoordinator(bind, token, role.Size, opt)
	if err != nil {
		return "", "", err
	}
	s.coord = coord
	s.coordDone = make(chan error, 1)
	go func() { s.coordDone <- coord.Serve(context.WithoutCancel(ctx)) }()
	addr = coord.Addr()
	if role.Coord == "" {
		if err := publish(role.CoordFile, role.JobID, addr, token); err != nil {
			return "", "", err
		}
		s.coordFile = role.CoordFile
		s.coordLine = rendezvousLine(role.JobID, addr, token)
	}
	return addr, token, nil
}

func (s *Session) stopCoord() {
	if s.coord != nil {
		s.coord.ln.Close()
		s.coord.fail(-1, "rank 0 is shutting down")
	}
	s.removeCoordFile()
}

// removeCoordFile removes the rendezvous file rank 0 published, unless it
// names another coordinator by now (a later job's, which a shared
// GORING_COORD_FILE lets overwrite it).
func (s *Session) removeCoordFile() {
	if s.coordFile == "" {
		return
	}
	if data, err := os.ReadFile(s.coordFile); err == nil && string(data) == s.coordLine {
		os.Remove(s.coordFile)
	}
	s.coordFile = ""
}

// Close leaves the job cleanly. Rank 0 under mpirun then waits (at most
// 5 s) for the others to leave before stopping the coordinator.
func (s *Session) Close() error {
	err := s.Client.Close()
	if s.coord != nil {
		select {
		case cerr := <-s.coordDone:
			if err == nil && cerr != nil {
				err = cerr
			}
		case <-time.After(5 * time.Second):
			err = errors.New("ranks did not leave within 5 s of rank 0")
		}
		s.stopCoord()
	}
	return err
}

// noJobID stands for an empty job id in the rendezvous file, whose fields
// are separated by spaces: an empty one would vanish and leave the file
// unreadable (mpirun without a job id, GORING_COORD_FILE naming the file).
const noJobID = "-"

// fileJobID is how jobID is written in the rendezvous file.
func fileJobID(jobID string) string {
	if jobID == "" {
		return noJobID
	}
	return jobID
}

// rendezvousLine is the rendezvous file's contents.
func rendezvousLine(jobID, addr, token string) string {
	return fmt.Sprintf("goring-coord/%d %s %s %s\n", ProtocolVersion, fileJobID(jobID), addr, token)
}

// publish writes "goring-coord/1 jobid addr token" into path, readable by
// the owner only (the token is a secret), atomically.
func publish(path, jobID, addr, token string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("rendezvous: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("rendezvous: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("rendezvous directory %s is accessible to others (mode %v): use a private one", dir, st.Mode().Perm())
	}
	tmp, err := os.CreateTemp(dir, ".coord-*")
	if err != nil {
		return fmt.Errorf("rendezvous: %w", err)
	}
	_, err = io.WriteString(tmp, rendezvousLine(jobID, addr, token))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("rendezvous: %w", err)
	}
	return nil
}

// readRendezvous reads the rendezvous file once: the address and token
// it names for this job (role.Token, when set, overrides the token), or
// why it names none.
func readRendezvous(role Role) (addr, token, why string) {
	data, err := os.ReadFile(role.CoordFile)
	if err != nil {
		return "", "", "file not found"
	}
	if len(data) >= 4096 {
		return "", "", "malformed rendezvous file"
	}
	f := strings.Fields(string(data))
	switch {
	case len(f) != 4 || f[0] != fmt.Sprintf("goring-coord/%d", ProtocolVersion):
		return "", "", "malformed rendezvous file"
	case f[1] != fileJobID(role.JobID):
		return "", "", fmt.Sprintf("file is for job %s, not %s (stale)", f[1], fileJobID(role.JobID))
	}
	token = f[3]
	if role.Token != "" {
		token = role.Token
	}
	return f[2], token, ""
}

// waitRendezvous polls the rendezvous file until it names this job.
func waitRendezvous(ctx context.Context, role Role, timeout time.Duration) (addr, token string, err error) {
	deadline := time.Now().Add(timeout)
	for {
		addr, token, why := readRendezvous(role)
		if why == "" {
			return addr, token, nil
		}
		if time.Now().After(deadline) {
			return "", "", fmt.Errorf("rank %d: no coordinator published in %s within %v: %s", role.Rank, role.CoordFile, timeout, why)
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
