// Package memtransport connects N ranks inside one process, for testing the
// executor with real data and no network: a Network hands out one
// Endpoint (an exec.Transport) per rank, and Job / RunPlan run every rank
// of a sched.Plan in its own goroutine.
//
// Matching follows the program JSON rule: a send from a to b with tag t
// meets the receive posted by b for (a, t); several of them pair in post
// order. Data is copied when a send meets its receive, never past the
// receive's buffer: a longer message completes the receive with
// ErrTruncated and the sender's length.
//
// Options make the network unfriendly on purpose, reproducibly from a
// seed: eager sends (complete at post, data buffered) or rendezvous sends
// (complete when received), a random delay per completion, and completions
// handed out in random order and in random partial batches. A Job that
// sees one rank fail aborts the network (as a launcher broadcasts a dead
// rank), so every other rank fails promptly with its own waited-on steps.
//
// A Job keeps its goroutines, machines and buffers between calls, and the
// network reuses its queues and eager buffers, so a warmed-up call
// allocates nothing; the executor's allocation test and benchmark rely on
// that.
package memtransport
