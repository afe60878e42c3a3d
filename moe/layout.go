package moe

// Layout is what every rank derives from a Routing (docs/contracts.md,
// "dispatch and combine"):
//
//   - dispatch src of rank r: its Tokens[r] rows in token order;
//   - dispatch dst of rank r: for each expert on r in ascending id, the
//     rows of the tokens that picked it, in global token order (the
//     source's rank, then its token order): RecvRows[r] rows;
//   - combine src is dispatch's dst (row for row, the experts' outputs),
//     combine dst is dispatch's src (row for row, the reduced outputs).
type Layout struct {
	R *Routing
	// Base[q] is the global id of rank q's first token; Base[NRanks] the
	// number of tokens.
	Base []int
	// Row[g*TopK+j] is the row of slot j of token g in its expert rank's
	// dispatch dst.
	Row []int
	// RecvRows[q] is the number of rows of rank q's dispatch dst.
	RecvRows []int
	// SlotAt[q][m] is the slot (g*TopK+j) whose row is m in rank q's
	// dispatch dst.
	SlotAt [][]int32
	owner  []int32
}

// NewLayout computes the layout of a routing; it validates it first.
func NewLayout(r *Routing) (*Layout, error) {
	if err := r.Validate(len(r.Tokens)); err != nil {
		return nil, err
	}
	n := r.NRanks()
	l := &Layout{R: r, Base: make([]int, n+1), RecvRows: make([]int, n)}
	for q, t := range r.Tokens {
		l.Base[q+1] = l.Base[q] + t
	}
	ne := len(r.Placement)
	count := make([]int, ne)
	for _, e := range r.Experts {
		count[e]++
	}
	// An expert's group starts after the groups of the lower experts of
	// its rank.
	start := make([]int, ne)
	for e := 0; e < ne; e++ {
		q := r.Placement[e]
		start[e] = l.RecvRows[q]
		l.RecvRows[q] += count[e]
	}
	l.SlotAt = make([][]int32, n)
	for q := range l.SlotAt {
		l.SlotAt[q] = make([]int32, l.RecvRows[q])
	}
	l.Row = make([]int, len(r.Experts))
	l.owner = make([]int32, l.Base[n])
	for q := 0; q < n; q++ {
		for g := l.Base[q]; g < l.Base[q+1]; g++ {
			l.owner[g] = int32(q)
		}
	}
	for s, e := range r.Experts { // slots in global token order
		m := start[e]
		start[e]++
		l.Row[s] = m
		l.SlotAt[r.Placement[e]][m] = int32(s)
	}
	return l, nil
}

// Owner is the rank that owns global token g.
func (l *Layout) Owner(g int) int { return int(l.owner[g]) }

// RankOf is the rank of slot s's expert.
func (l *Layout) RankOf(s int) int { return l.R.Placement[l.R.Experts[s]] }

// SlotsOn appends to out the slots of token g whose experts live on rank
// q, in slot order.
func (l *Layout) SlotsOn(g, q int, out []int) []int {
	k := l.R.TopK
	for s := g * k; s < (g+1)*k; s++ {
		if l.RankOf(s) == q {
			out = append(out, s)
		}
	}
	return out
}

// Dests appends to out the ranks token g goes to, ascending and unique.
func (l *Layout) Dests(g int, out []int) []int {
	k := l.R.TopK
	start := len(out)
	for s := g * k; s < (g+1)*k; s++ {
		q := l.RankOf(s)
		dup := false
		for _, x := range out[start:] {
			dup = dup || x == q
		}
		if !dup {
			out = append(out, q)
		}
	}
	d := out[start:]
	for i := 1; i < len(d); i++ { // insertion sort: k <= a few
		for j := i; j > 0 && d[j] < d[j-1]; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
	return out
}

// PairRows is the number of rows rank src's tokens send rank dst in a
// one-copy-per-(token, rank) exchange (a token counts once however many
// of its experts dst holds): the all-to-all-v matrix of unicast dispatch,
// in rows. The diagonal is what stays on a rank.
func (l *Layout) PairRows() [][]int64 {
	n := l.R.NRanks()
	m := make([][]int64, n)
	for q := range m {
		m[q] = make([]int64, n)
	}
	var d []int
	for g := 0; g < l.Base[n]; g++ {
		d = l.Dests(g, d[:0])
		for _, q := range d {
			m[l.owner[g]][q]++
		}
	}
	return m
}
