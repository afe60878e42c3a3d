package sched

// pow2Fold maps any rank count onto a power of two the way MPICH's
// recursive algorithms do (Thakur, Rabenseifner and Gropp 2005, section
// 4.4): with P' the largest power of two <= P and rem = P - P', each even
// rank r < 2*rem hands its whole vector to r+1 and drops out ("folded"),
// and the P' ranks left run the power-of-two algorithm under new ranks
// 0..P'-1; at the end each odd stand-in sends the result back to its even
// partner. Rabenseifner and recursive-doubling allreduce share it so the
// two agree on who folds and who stands in.
type pow2Fold struct {
	p2  int // P', the largest power of two <= P
	rem int // P - P'
}

func newPow2Fold(n int) pow2Fold {
	p2 := 1
	for p2*2 <= n {
		p2 *= 2
	}
	return pow2Fold{p2: p2, rem: n - p2}
}

// folded reports whether rank r drops out (it sends to r+1 and receives
// the result from it).
func (f pow2Fold) folded(r int) bool { return r < 2*f.rem && r%2 == 0 }

// standsIn reports whether rank r combines r-1's vector with its own
// before the power-of-two part.
func (f pow2Fold) standsIn(r int) bool { return r < 2*f.rem && r%2 == 1 }

// newRank is r's rank in the power-of-two part, or -1 if r folded.
func (f pow2Fold) newRank(r int) int {
	switch {
	case f.folded(r):
		return -1
	case f.standsIn(r):
		return r / 2
	}
	return r - f.rem
}

// realRank is the rank behind new rank nr.
func (f pow2Fold) realRank(nr int) int {
	if nr < f.rem {
		return 2*nr + 1
	}
	return nr + f.rem
}
