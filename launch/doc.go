// Package launch starts the ranks of a goring job and lets them find each
// other. It is the only place that knows how processes are born and how
// they die.
//
// # The pieces
//
// A Coordinator listens on loopback TCP. Each rank opens one connection to
// it, presents the job's random token and the protocol version in a hello,
// and waits for the welcome: the table of every rank's hostname, emulated
// node, local index and opaque payload (goring bench's team cards, or its
// lanes' UCX worker addresses). After that the connection carries
// collective control traffic that is too rare to be worth UCX: Allgather
// of small byte strings (timing results) and Barrier.
//
//	rank r                       coordinator
//	  | -- hello{token,rank,payload} -> |   admitted once all N ranks said hello
//	  | <- welcome{table} ------------- |
//	  | -- gather{seq,data} ----------> |   repeated, any order of ranks
//	  | <- gathered{seq,data[N]} ------ |
//	  | -- heartbeat (every 500 ms) --> |   both directions
//	  | -- bye ----------------------->  |   a clean exit
//
// Frames are a 4-byte big-endian length then a JSON object. Every read has a
// deadline and a size bound (MaxFrameBytes); a bad token, a version other
// than ProtocolVersion, a rank out of range, a duplicate rank or a frame
// that does not parse ends that connection with an error frame that says
// why. No length a peer sends is trusted beyond those bounds. A welcome
// that would exceed MaxFrameBytes (payloads too large for the job's
// rank count) ends the job at once with an error frame to every rank.
//
// # The data plane
//
// The payload a rank presents is its RankWorker's address. Once the table
// arrives, RankWorker.Connect turns every rank's address into the UCX
// transport the executor runs on. The UCC team layer joins through the
// same RankWorker, with UCC's out-of-band allgather in the coordinator's
// place.
//
// Where UCX_TLS is not set, a rank of goring's own jobs uses DefaultTLS
// (shared memory on one host, TCP added across hosts). On the
// network-namespace testbed a rank opens a worker per rail
// (OpenRailWorker); a Testbed names a node namespace that is not up
// (Testbed.Missing) and reads node 0's rails and their tc rate where the
// job's flags do not give them (Testbed.Complete: CountRails, RailRate),
// and LocalJob.OnTestbed starts each node's ranks in its namespace
// (TestbedNetns) and the coordinator on node 0's rail 0.
//
// # Failure detection
//
// A rank that disconnects before its bye, or sends nothing for
// HeartbeatTimeout, has failed. The coordinator broadcasts fail{rank,reason}
// to every other rank, whose Client closes its Failed channel; the bench
// worker then exits non-zero naming that rank. A rank that loses the
// coordinator exits too (under mpirun naming rank 0, which hosts it). A
// rank that is alive but stuck inside a collective keeps heartbeating, so
// that case is left to the executor's deadline.
//
// # Two ways to start
//
// RunLocal (goring bench --np N) hosts the coordinator in the launching
// process and starts N copies of the same executable with GORING_RANK,
// GORING_SIZE, GORING_LOCAL_RANK, GORING_COORD and GORING_TOKEN set. It
// watches both the children's exits and the coordinator, names the first
// rank that failed, and kills whatever is left after a grace period, so the
// launcher returns within seconds of any failure.
//
// Under mpirun the same binary reads OMPI_COMM_WORLD_RANK, _SIZE and
// _LOCAL_RANK (see FromEnv). Rank 0 hosts the coordinator itself. It binds
// GORING_COORD if that is set (others dial it, retrying until the join
// deadline); otherwise it binds 127.0.0.1 on a free port and publishes
// "jobid address token" ("-" for no job id) in a file readable only by
// the user (GORING_COORD_FILE, default $TMPDIR/goring-<uid>/<jobid>.coord),
// which the other ranks poll. It writes the file whole (a new file renamed
// over the old) and removes it once every rank has joined, so a rank 0
// that a failure ends, which never reaches Close, leaves none behind. A
// file can still outlive a rank 0 killed while the ranks join, and Open
// MPI gives a later job the same id in time: so a rank whose address from
// the file cannot be reached, hangs up before the welcome or refuses the
// token reads the file again and tries what it names then (one that keeps
// quiet is left once the file names another), until the join timeout.
// GORING_TOKEN, when set, overrides the generated token. So plain
//
//	mpirun -np 4 goring bench allgather --bytes 1MiB:16MiB
//
// works on one host, and GORING_COORD extends it to several. A shared file
// system does not: the file names rank 0's loopback address, which no
// other host reaches.
package launch
