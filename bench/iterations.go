package bench

// LargeMessageBytes is OMB's LARGE_MESSAGE_SIZE: above it, fewer iterations.
const LargeMessageBytes = 8192

// OMB's default counts for collectives.
const (
	ItersSmall  = 1000
	WarmupSmall = 200
	ItersLarge  = 100
	WarmupLarge = 10
)

// Iterations returns the timed and warm-up iteration counts for a message
// of bytes. iters <= 0 and warmup < 0 mean "as OMB chooses".
func Iterations(bytes int64, iters, warmup int) (timed, skip int) {
	timed, skip = ItersSmall, WarmupSmall
	if bytes > LargeMessageBytes {
		timed, skip = ItersLarge, WarmupLarge
	}
	if iters > 0 {
		timed = iters
	}
	if warmup >= 0 {
		skip = warmup
	}
	return timed, skip
}
