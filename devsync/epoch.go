package devsync

// Epoch numbers a team's calls: 1 for the first, one more per call. Flag
// words hold the epoch of the last signal written into them; 0 (their
// state after allocation) is below every call's epoch.
type Epoch uint64

// FirstEpoch is a team's first call.
const FirstEpoch Epoch = 1

// Next is the epoch of the call after e.
func (e Epoch) Next() Epoch { return e + 1 }

// Parity is the data slot, 0 or 1, that the call of epoch e uses.
func (e Epoch) Parity() int { return int(e & 1) }

// Satisfied reports whether a flag word holding v releases a wait of
// epoch e: a signal of this call or of a later one (a fast peer may
// already have signalled its next call into the same word).
func Satisfied(v uint64, e Epoch) bool { return v >= uint64(e) }
