package exec

import "time"

// Transport moves bytes between ranks for the driver (Run). The executor
// itself never calls it: the Machine only says what to post.
//
// The interface follows a UCX worker's shape: PostSend and PostRecv are
// ucp_tag_send_nbx / ucp_tag_recv_nbx with the token as the request's user
// data; their callbacks append a Completion to a queue that Wait drains;
// Wait progresses the worker and, when nothing is ready, arms it and sleeps
// on its event fd until the deadline (so an idle rank uses no CPU).
//
// Matching rule: a send to peer p with tag t matches the receive posted on
// p for (this rank, t); several sends (receives) with the same peer and tag
// match in the order they were posted. The Machine posts sends and
// receives of one (peer, tag) in ascending step id, which is the program
// JSON rule. UCX tag matching per endpoint gives exactly this order when
// the wire tag encodes (sender rank, tag).
//
// A Transport is used by one goroutine at a time (the rank's driver), as a
// UCX worker created with UCS_THREAD_MODE_SINGLE is.
type Transport interface {
	// PostSend starts sending p.Buf to p.Peer with p.Tag (p.Path is the
	// step's routing hint). The buffer must not be modified until the
	// completion with p.Token arrives. The error is for failures detected
	// at post time (bad peer, closed endpoint, a memory type the
	// transport cannot move). p is only valid during the call.
	PostSend(p *Post) error
	// PostRecv starts receiving one message from p.Peer with p.Tag into
	// p.Buf. A message longer than the buffer must complete with an error
	// (never write past it), reporting the sender's length in
	// Completion.Len.
	PostRecv(p *Post) error
	// Wait appends completions to dst and returns it. It blocks until at
	// least one completion is available or the deadline passes; on expiry
	// it returns dst unchanged and a nil error. An error means the
	// transport itself failed (worker error, peer lost).
	Wait(deadline time.Time, dst []Completion) ([]Completion, error)
	// Cancel withdraws the operation posted with token. When Cancel
	// returns, the transport no longer touches that operation's buffer. It
	// is called only on the failure path, for every posted operation that
	// has not completed (including a batch's operations that were never
	// posted because an earlier post failed, and asynchronous local steps
	// of a LocalExecutor that is not an AsyncLocal): a token the transport
	// does not know, or that already completed, is a no-op returning nil.
	// A completion for a cancelled token, if one still arrives, is ignored.
	Cancel(token uint64) error
}

// Completion reports that a posted operation (or an asynchronous local
// step, see LocalExecutor) finished.
type Completion struct {
	// Token is the value given at post time. Tokens the Machine makes
	// never have bit 63 set; a transport may use such tokens for its own
	// operations (a barrier) and filter their completions out itself.
	Token uint64
	// Len is the number of bytes moved. For a receive it is the length of
	// the message that arrived; the Machine fails the step when it is not
	// exactly the posted length (longer means the transport truncated,
	// shorter that the peer's program disagrees). Sends may leave it 0.
	Len int64
	// Err is the operation's failure, nil on success.
	Err error
}
