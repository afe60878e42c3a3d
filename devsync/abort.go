package devsync

import "fmt"

// AbortWord is the abort word's value that says rank died. Zero means
// "run"; the host sets the word (host-mapped memory, read by every
// spinning wait) when it learns that a rank of the team is gone.
func AbortWord(rank int) uint64 { return uint64(rank) + 1 }

// DeadRank is the rank an abort word names, or false when it is zero.
func DeadRank(word uint64) (int, bool) {
	if word == 0 {
		return 0, false
	}
	return int(word - 1), true
}

// AbortError is a wait that ended because the abort word was set.
type AbortError struct {
	Rank, Block int // the waiting rank and its block
	Peer        int // the peer whose flag it waited for
	Phase       int
	Epoch       Epoch
	Dead        int // the rank the abort word names
}

func (e *AbortError) Error() string {
	return fmt.Sprintf("devsync: rank %d block %d waiting for rank %d (phase %d, epoch %d): aborted: rank %d is dead",
		e.Rank, e.Block, e.Peer, e.Phase, e.Epoch, e.Dead)
}

// Poll is one look of a wait at its flag word (flag) and the abort word
// (abort): done when the flag holds epoch e or later; an *AbortError
// (filled in by the caller's position w) when not and the abort word is
// set; neither means spin again. The flag is looked at first: data that
// arrived is used even if a rank died afterwards.
func Poll(flag, abort uint64, w AbortError) (done bool, err error) {
	if Satisfied(flag, w.Epoch) {
		return true, nil
	}
	if dead, ok := DeadRank(abort); ok {
		w.Dead = dead
		return false, &w
	}
	return false, nil
}

// Spin waits as a device kernel does: it loads the flag (flag) until
// Poll says done, and loads the abort word (abort) only every checkEvery
// loads, since the abort word is in host memory, slower to read than the
// local flag. A real caller makes flag an acquire load.
func Spin(flag, abort func() uint64, checkEvery int, w AbortError) error {
	checkEvery = max(1, checkEvery)
	for i := 1; ; i++ {
		var a uint64
		if i%checkEvery == 0 {
			a = abort()
		}
		done, err := Poll(flag(), a, w)
		if done || err != nil {
			return err
		}
	}
}
