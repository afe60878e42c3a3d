package devsync

// Ended reports whether the call of epoch e has ended on a rank whose last
// kernel ran blocks CTAs, from that rank's done words (word(b) loads block
// b's word). A block releases its word after all its stores, so every
// output the call writes is in place once Ended says so.
func Ended(word func(block int) uint64, blocks int, e Epoch) bool {
	for b := blocks - 1; b >= 0; b-- { // the last CTAs tend to start last
		if !Satisfied(word(b), e) {
			return false
		}
	}
	return blocks > 0
}
