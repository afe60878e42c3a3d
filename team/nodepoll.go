package team

// A node call's polls. Once its kernel is on the GPU, a node call
// (node.go) waits for host-mapped done words that its kernels write; its
// polls read those words (nodeexec.Local.Progress) and, now and then, the
// clock and the peers' processes (checkPeers). Nothing there touches the
// team's UCX worker, its C cache or C calls, which is what the C path's
// lock guards (cexec.Team.Lock), nor runs UCX on CUDA memory, which is
// what making the GPU's context current serves (Coll.current). A poll of
// UCC's test loop that did both cost two cgo calls for the lock and one
// for the context, each time, while the kernel ran: most of the host's
// cost of noticing that the kernel has ended.

// inKernel says whether c is a node call past its set-up exchanges: its
// kernel launched (or, for PrepareStream's pass, nothing left to run), so
// that its Progress reads only the done words, the clock and the watch,
// and cannot fall back to a runner that sends messages.
func (c *Coll) inKernel() bool {
	r, ok := c.run.(*nodeRunner)
	return ok && c.state == collRunning && r.setup == nil
}

// pollsKernelOnly says whether the team's progress now would touch
// nothing but the node kernel of its current call: the team connected,
// that call in its kernel, and no other call queued behind it (which
// progress would start once it ends). Caller holds t.mu, which C never
// takes, and which every Go change of the queue holds.
func (t *Team) pollsKernelOnly() bool {
	return t.tr != nil && t.cur != nil && len(t.queue) == 0 && t.cur.inKernel()
}

// startsKernelOnly says whether a call's Begin only launches its node
// kernel (or ends PrepareStream's pass): a node call of a team whose
// node regions every rank has set up. Its launch sets the context itself
// (cuda's shim, for every driver call), and no fallback to messages can
// follow (Begin falls back only where the node path is off).
func (c *Coll) startsKernelOnly() bool {
	_, ok := c.run.(*nodeRunner)
	n := c.team.node
	return ok && n != nil && n.ready && n.off == nil
}

// noteBusyChanged is noteBusy for a caller that does not hold the C lock:
// it takes it only when the word changes. Go alone writes the word, under
// t.mu and the C lock both, so reading it under t.mu alone is safe, and a
// write still happens under the lock C reads it under.
func (t *Team) noteBusyChanged() {
	if t.cpath == nil || t.cpath.GoBusy() == (t.cur != nil || len(t.queue) > 0) {
		return
	}
	defer unlockC(t.lockC())
	t.noteBusy()
}
