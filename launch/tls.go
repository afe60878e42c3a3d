package launch

import (
	"os"
	"strconv"
)

// UCX transport lists a rank of goring's own jobs (goring bench, goring
// calibrate) uses when UCX_TLS is not set (see docs/results.md for what
// was tried): shared memory (posix/sysv + cma single-copy) and self when
// every rank is on this host, TCP added when the job spans hosts (mpirun
// with OMPI_COMM_WORLD_LOCAL_SIZE < SIZE). TCP is left out on one host
// because UCX would otherwise stripe large messages over a TCP lane too.
const (
	DefaultUCXTLS      = "self,sm"
	DefaultUCXTLSHosts = "self,sm,tcp"
)

// DefaultTLS picks the transport list for this rank's job.
func DefaultTLS() string {
	ls, err1 := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
	ws, err2 := strconv.Atoi(os.Getenv(envOMPISize))
	if err1 == nil && err2 == nil && ls < ws {
		return DefaultUCXTLSHosts
	}
	return DefaultUCXTLS
}
