package sched

// intraIallgatherLinear is "Iallgather: Linear" of Parallel Rings Table I. The
// table gives it the same pairs as Ibcast Linear, spread over G-1 steps: in
// step k every GPU sends its own block to the k-th other GPU in local-index
// order (step 1 of 4 GPUs: 0->1, 1->0, 2->0, 3->0, the incast the table
// marks). We read the steps as sequential: a GPU's step-k send waits for its
// step-(k-1) send, while receives are all posted at once. This is what makes
// it differ from `linear`, which posts every send at once (Algorithm 1); the
// paper does not spell the difference out beyond the table, so this reading
// is ours.
type intraIallgatherLinear struct{}

func (intraIallgatherLinear) early(g *intraGroup) {
	G, l := g.run.sh.gpus, g.run.p.Local
	for q := 0; q < G; q++ {
		if q == l {
			continue
		}
		// GPU q sends to l in the step where l is q's k-th other GPU.
		k := l + 1
		if l > q {
			k = l
		}
		g.recv(q, q, kindIntra+k)
	}
	prev := g.ready
	k := 0
	for q := 0; q < G; q++ {
		if q == l {
			continue
		}
		k++
		if id := g.send(l, q, kindIntra+k, prev, g.ready); id >= 0 {
			prev = id
		}
	}
}

func (intraIallgatherLinear) late(*intraGroup, int) {}
