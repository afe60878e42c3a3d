package choose

import "github.com/goring-hpc/goring/coll"

// The shape goring model scores gives a team of one host, where no team
// exists to ask: the team layer's own shape (team/gpu.go) comes from its
// ranks' cards.

// OneHost is the shape of a team of size ranks on one host with gpus
// GPUs: 0, host memory only; 1, every rank's process sees that one GPU,
// as the team layer finds from its ranks' cards; more, a GPU per rank.
// The host's GPU count is the shape's too, as the team layer gives it
// (the rows for a GPU each, Row.Spread, ask it). Each call fills in its
// collective, bytes and memory (Shape.Claim).
func OneHost(size, gpus int) Shape {
	return Shape{Size: size, GPUs: gpus, Push: gpus > 0, SharedGPU: gpus == 1}
}

// Claim is Auto's algorithm and fallback for c on bytes of host or device
// memory on s ("" where Auto has none), in the form tune.Claims asks for
// (a tune.MemChooser). One host needs no model: the table has a row for
// every shape of one host.
func (s Shape) Claim(c coll.Collective, bytes int64, host bool) (alg, fallback string) {
	s.Coll, s.Bytes, s.Host = c, bytes, host
	ch, err := Auto(s, nil)
	if err != nil {
		return "", ""
	}
	return ch.Alg, ch.Fallback
}
