package bench

import (
	"fmt"
	"sync"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
)

// Dispatch and combine in the runner. A point's "size" is the number of
// tokens each rank owns (Config.Sizes); Config.Routing draws the routing
// for it, the same on every rank. Rows carry that token count in Bytes
// (the table's size column) and the routing's token bytes in the plan.

// rowSize is the size a row reports: tokens per rank for dispatch and
// combine, else the plan's bytes.
func rowSize(plan *sched.Plan) int64 {
	if plan.Routing != nil && len(plan.Routing.Tokens) > 0 {
		return int64(plan.Routing.Tokens[0])
	}
	return plan.Bytes
}

// moePattern is a Pattern's view of a routing, built once per pattern.
type moePattern struct {
	once sync.Once
	lay  *moe.Layout
	err  error
}

func (p *Pattern) layout() (*moe.Layout, error) {
	p.moe.once.Do(func() { p.moe.lay, p.moe.err = moe.NewLayout(p.Routing) })
	return p.moe.lay, p.moe.err
}

// moeBytes are rank r's src and dst sizes: dispatch moves token rows to
// expert rows, combine the other way.
func (p *Pattern) moeBytes(r int) (src, dst int64) {
	lay, err := p.layout()
	if err != nil {
		return 0, 0
	}
	own, rows := int64(lay.R.Tokens[r]), int64(lay.RecvRows[r])
	H := lay.R.TokenBytes
	if p.Coll == coll.Combine {
		return rows * H, own * H
	}
	return own * H, rows * H
}

// slotValue is element e of the expert output of slot s in iteration it:
// a small integer in [-3, 3], so a token's sum of at most 8 is exact in
// bfloat16, whatever the order. Hashed over all three, so that the
// elements of a row differ (an element offset off by one fails) and slots
// 7 apart do not share their outputs.
func slotValue(s, it int, e int64) int64 {
	return int64(mixHash(e, s, it)%7) - 3
}

// moeFill writes rank r's input: its token rows (dispatch, the same bytes
// as any moving collective) or its experts' outputs (combine).
func (p *Pattern) moeFill(src []byte, r, it int) {
	if p.Coll != coll.Combine {
		for x := range src {
			src[x] = patternByte(r, it, int64(x))
		}
		return
	}
	lay, err := p.layout()
	if err != nil {
		return
	}
	H, es := lay.R.TokenBytes, int64(p.Dtype.Size())
	for m, s := range lay.SlotAt[r] {
		for e := int64(0); e < H/es; e++ {
			at := int64(m)*H + e*es
			p.putValue(src[at:at+es], slotValue(int(s), it, e))
		}
	}
}

// moeCheck compares rank r's dispatch dst (every expert row is its
// token's row at the owner) or combine dst (every token row is the sum
// of its k slots' values).
func (p *Pattern) moeCheck(dst []byte, r, it int) error {
	lay, err := p.layout()
	if err != nil {
		return err
	}
	H, k := lay.R.TokenBytes, lay.R.TopK
	if p.Coll != coll.Combine {
		for m, s := range lay.SlotAt[r] {
			g := int(s) / k
			o := lay.Owner(g)
			for x := int64(0); x < H; x++ {
				at := int64(m)*H + x
				if w := patternByte(o, it, int64(g-lay.Base[o])*H+x); dst[at] != w {
					return &ValidationError{Rank: r, Iteration: it, Offset: at, Got: fmt.Sprintf("%#02x", dst[at]), Want: fmt.Sprintf("%#02x", w)}
				}
			}
		}
		return nil
	}
	es := int64(p.Dtype.Size())
	want := make([]byte, es)
	for i := 0; i < lay.R.Tokens[r]; i++ {
		g := lay.Base[r] + i
		for e := int64(0); e < H/es; e++ {
			var sum int64
			for j := 0; j < k; j++ {
				sum += slotValue(g*k+j, it, e)
			}
			p.putValue(want, sum)
			at := int64(i)*H + e*es
			if string(dst[at:at+es]) != string(want) {
				return &ValidationError{Rank: r, Iteration: it, Offset: at, Got: fmt.Sprintf("%x", dst[at:at+es]), Want: fmt.Sprintf("%x (%s %d)", want, p.Dtype, sum)}
			}
		}
	}
	return nil
}
