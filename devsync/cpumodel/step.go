package cpumodel

import (
	"github.com/goring-hpc/goring/devsync"
)

// step runs a's next step.
func (w *world) step(a *agent) {
	st := a.steps[a.pc]
	switch st.Kind {
	case devsync.Signal:
		w.signal(a, st)
	case devsync.Wait:
		if w.cfg.Mutation != SkipWait {
			if _, err := w.poll(a, st); err != nil {
				w.res.Errs = append(w.res.Errs, err)
				a.stopped = true
				return
			}
		}
	case devsync.Move:
		if w.cfg.Mutation != SkipWait {
			if _, err := w.pollLL(a, st); err != nil {
				w.res.Errs = append(w.res.Errs, err)
				a.stopped = true
				return
			}
		}
		w.move(a, st)
	}
	if a.pc++; a.pc == len(a.steps) {
		w.finish(a)
	}
}

// finish is the block's end of its call (devsync "Completion"): the
// epoch stored into its done word with release semantics, so that the
// word becomes visible only after every earlier store of the block
// (drainOne keeps a release store until it is the last one buffered; not
// under EarlyDone). The earlier stores still drain one by one in any
// order meanwhile, as on the GPU.
func (w *world) finish(a *agent) {
	a.buf = append(a.buf, store{done: true, release: w.cfg.Mutation != EarlyDone, rank: a.rank, word: a.block, val: uint64(w.epoch(a.call))})
}

// release makes every buffered store of a visible, in order.
func (w *world) release(a *agent) {
	for _, s := range a.buf {
		w.apply(s)
	}
	a.buf = nil
}

// signal: the release (every earlier store of the agent becomes visible),
// then one buffered flag store per peer.
func (w *world) signal(a *agent, st devsync.Step) {
	if w.cfg.Mutation != NoFence {
		w.release(a)
	}
	for _, q := range st.Peers {
		a.buf = append(a.buf, store{flag: true, rank: q, word: devsync.FlagWord(st.Phase, a.block, a.rank), val: uint64(w.epoch(a.call))})
	}
}

// poll looks once at every flag the wait needs: done when all are in, an
// *devsync.AbortError at the first missing one when the abort word is set.
func (w *world) poll(a *agent, st devsync.Step) (bool, error) {
	for _, q := range st.Peers {
		pos := devsync.AbortError{Rank: a.rank, Block: a.block, Peer: q, Phase: st.Phase, Epoch: w.epoch(a.call)}
		done, err := devsync.Poll(w.mem.flags[a.rank][devsync.FlagWord(st.Phase, a.block, q)], w.mem.abort, pos)
		if !done {
			return false, err
		}
	}
	return true, nil
}

// pollLL looks once at every line of the step's LL sources (a Move that
// reads an LL region first waits for its lines): done when every word
// holds the call's tag, an *devsync.AbortError at the first that does
// not when the abort word is set. A source region is one peer's lines.
func (w *world) pollLL(a *agent, st devsync.Step) (bool, error) {
	s := w.cfg.shape(a.call)
	parity := w.epoch(a.call).Parity()
	for _, r := range st.Srcs {
		if r.Space != devsync.LL {
			continue
		}
		pos := devsync.AbortError{Rank: a.rank, Block: a.block, Peer: r.Off * s.ElemSize / s.LLRegionBytes(), Epoch: w.epoch(a.call)}
		tags := w.mem.llTag[r.Rank][parity]
		for i := r.Off * s.ElemSize / 4; i < (r.Off+r.Len)*s.ElemSize/4; i += 2 {
			done, err := devsync.PollLL(tags[i], tags[i+1], w.mem.abort, pos)
			if !done {
				return false, err
			}
		}
	}
	return true, nil
}

// move loads the sources (in the order given, or the mutation's), combines
// them and stores the result into every destination.
func (w *world) move(a *agent, st devsync.Step) {
	es := w.cfg.shape(a.call).ElemSize
	srcs := st.Srcs
	if w.cfg.Mutation == OwnRankFirst && len(srcs) > 1 {
		srcs = append(append([]devsync.Region(nil), srcs[a.rank:]...), srcs[:a.rank]...)
	}
	acc := w.load(a, srcs[0])
	for _, r := range srcs[1:] {
		w.cfg.Reduce(acc, w.load(a, r))
	}
	parity := w.epoch(a.call).Parity()
	for _, d := range st.Dsts {
		switch d.Space {
		case devsync.Output:
			a.buf = append(a.buf, store{out: true, rank: a.rank, call: a.call, off: d.Off * es, data: append([]byte(nil), acc...)})
		case devsync.Slot:
			a.buf = append(a.buf, store{rank: d.Rank, parity: parity, off: d.Off * es, data: append([]byte(nil), acc...), tag: a.call + 1})
		case devsync.LL:
			// One store per 4-byte word, each with its tag: the words of
			// a line land in any order, as on NVLink.
			tag := devsync.LLTag(w.epoch(a.call))
			for i := 0; i < len(acc); i += 4 {
				a.buf = append(a.buf, store{ll: true, llTag: tag, rank: d.Rank, parity: parity, off: d.Off*es + i, data: append([]byte(nil), acc[i:i+4]...), tag: a.call + 1})
			}
		default:
			panic("cpumodel: a plan stores into an input")
		}
	}
}

// load reads a region as a's block sees it: its input, or a slot's
// visible bytes overlaid by a's own buffered stores. Slot bytes not
// stored by a's call are recorded as stale reads.
func (w *world) load(a *agent, r devsync.Region) []byte {
	es := w.cfg.shape(a.call).ElemSize
	off, n := r.Off*es, r.Len*es
	switch r.Space {
	case devsync.Input:
		return append([]byte(nil), w.inputs[a.call][a.rank][off:off+n]...)
	case devsync.Output:
		panic("cpumodel: a plan loads an output")
	case devsync.LL:
		parity := w.epoch(a.call).Parity()
		w.checkFresh(a, r.Rank, off, w.mem.llCall[r.Rank][parity][off:off+n])
		return append([]byte(nil), w.mem.ll[r.Rank][parity][off:off+n]...)
	}
	parity := w.epoch(a.call).Parity()
	b := append([]byte(nil), w.mem.slot[r.Rank][parity][off:off+n]...)
	tag := append([]int(nil), w.mem.tag[r.Rank][parity][off:off+n]...)
	for _, s := range a.buf {
		if s.flag || s.rank != r.Rank || s.parity != parity {
			continue
		}
		for i := range s.data {
			if j := s.off + i - off; j >= 0 && j < n {
				b[j], tag[j] = s.data[i], s.tag
			}
		}
	}
	w.checkFresh(a, r.Rank, off, tag)
	return b
}

// checkFresh records a stale read where a byte of owner's memory at off
// (tags: the call+1 that stored each) was not stored by a's call.
func (w *world) checkFresh(a *agent, owner, off int, tags []int) {
	for i, t := range tags {
		if t != a.call+1 {
			w.res.Stale = append(w.res.Stale, StaleRead{Rank: a.rank, Block: a.block, Call: a.call, Owner: owner, Off: off + i, StoredBy: t - 1})
			return // one per load is enough to say it
		}
	}
}
