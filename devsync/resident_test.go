package devsync

import (
	"errors"
	"testing"
)

// The parking handshake is the store-buffering shape: each side stores
// its word and then loads the other's. On a machine whose stores wait in
// a buffer (x86's, and a GPU's stores to host memory over PCIe), both
// loads may miss both stores unless each side fences between its store
// and its load: then the kernel leaves without the call and the host
// believes it took it, and the call never runs. sbOutcomes explores
// every interleaving of two threads over such a machine.

type sbOp struct {
	store, fence bool
	addr         int
	val          uint64
}

type sbThread struct {
	prog []sbOp
	pc   int
	buf  []sbOp // stores not yet in memory, oldest first
	got  uint64 // the thread's one load
}

type sbState struct {
	mem [2]uint64
	t   [2]sbThread
}

func (s sbState) clone() sbState {
	c := s
	for i := range c.t {
		c.t[i].buf = append([]sbOp(nil), s.t[i].buf...)
	}
	return c
}

// sbOutcomes returns every pair of loaded values the two programs can
// end with.
func sbOutcomes(p0, p1 []sbOp) map[[2]uint64]bool {
	out := map[[2]uint64]bool{}
	var walk func(s sbState)
	walk = func(s sbState) {
		moved := false
		for i := range s.t {
			th := &s.t[i]
			if len(th.buf) > 0 { // the oldest buffered store reaches memory
				n := s.clone()
				st := n.t[i].buf[0]
				n.t[i].buf = n.t[i].buf[1:]
				n.mem[st.addr] = st.val
				walk(n)
				moved = true
			}
			if th.pc >= len(th.prog) {
				continue
			}
			op := th.prog[th.pc]
			switch {
			case op.fence:
				if len(th.buf) > 0 {
					continue // a fence waits for the buffer to drain
				}
				n := s.clone()
				n.t[i].pc++
				walk(n)
			case op.store:
				n := s.clone()
				n.t[i].buf = append(n.t[i].buf, op)
				n.t[i].pc++
				walk(n)
			default:
				n := s.clone()
				v := n.mem[op.addr]
				for _, b := range n.t[i].buf { // a thread sees its own buffered stores
					if b.addr == op.addr {
						v = b.val
					}
				}
				n.t[i].got = v
				n.t[i].pc++
				walk(n)
			}
			moved = true
		}
		if !moved {
			out[[2]uint64{s.t[0].got, s.t[1].got}] = true
		}
	}
	walk(sbState{t: [2]sbThread{{prog: p0}, {prog: p1}}})
	return out
}

// lostDoorbell reports whether the kernel can miss call e+1 while the
// host misses the kernel's parking: the call would never run.
func lostDoorbell(kernelFence, hostFence bool) bool {
	const doorbell, parked = 0, 1
	const e = 5
	kernel := []sbOp{{store: true, addr: parked, val: e}}
	if kernelFence {
		kernel = append(kernel, sbOp{fence: true})
	}
	kernel = append(kernel, sbOp{addr: doorbell})
	host := []sbOp{{store: true, addr: doorbell, val: e + 1}}
	if hostFence {
		host = append(host, sbOp{fence: true})
	}
	host = append(host, sbOp{addr: parked})
	for o := range sbOutcomes(kernel, host) {
		if o[0] != e+1 && o[1] != e {
			return true
		}
	}
	return false
}

func TestParkingNeedsAFenceOnBothSides(t *testing.T) {
	if lostDoorbell(true, true) {
		t.Fatal("fenced on both sides, the kernel and the host can still miss each other")
	}
	for _, c := range []struct{ kernel, host bool }{{false, true}, {true, false}, {false, false}} {
		if !lostDoorbell(c.kernel, c.host) {
			t.Errorf("kernel fence %v, host fence %v: the model found no lost doorbell (it must)", c.kernel, c.host)
		}
	}
}

type fakeRing struct {
	w     [RingWords]uint64
	onPar func(*fakeRing) // the kernel's move while the host waits
}

func (f *fakeRing) Load(i int) uint64     { return f.w[i] }
func (f *fakeRing) Store(i int, v uint64) { f.w[i] = v }

func TestHandOver(t *testing.T) {
	call := RingCall{In: 0x1000, Out: 0x2000, Count: 7, Stride: 9, Root: 1, Linger: 50000}
	const e = Epoch(41)
	for _, c := range []struct {
		name   string
		parked uint64
		final  func(*fakeRing)
		took   bool
		waits  int
	}{
		{name: "lingering", parked: 40, took: true},
		{name: "parked, then took", parked: 41, final: func(f *fakeRing) { f.w[RingFinal] = Took(e) }, took: true, waits: 1},
		{name: "parked, then left", parked: 41, final: func(f *fakeRing) { f.w[RingFinal] = Left(e) }, took: false, waits: 1},
		// The kernel took the call, ran it and parked after it before the
		// host looked: its final word is the later parking's.
		{name: "parked, took, parked again", parked: 41, final: func(f *fakeRing) { f.w[RingParked], f.w[RingFinal] = 42, Left(e+1) }, took: true, waits: 1},
	} {
		f := &fakeRing{}
		f.w[RingParked] = c.parked
		f.w[RingFinal] = Took(e - 1) // an earlier parking's word settles nothing
		waits := 0
		took, err := HandOver(f, e, call, func() error {
			if waits++; waits > 3 {
				return errors.New("no final word settles the hand-over")
			}
			if c.final != nil {
				c.final(f)
			}
			return nil
		})
		if err != nil || took != c.took || waits != c.waits {
			t.Errorf("%s: took %v, err %v after %d waits; want took %v after %d", c.name, took, err, waits, c.took, c.waits)
		}
		want := [RingFields]uint64{FieldIn: 0x1000, FieldOut: 0x2000, FieldCount: 7, FieldStride: 9, FieldRoot: 1, FieldLinger: 50000}
		for k, v := range want {
			if f.w[RingEpoch(k)] != 42 || f.w[RingField(k)] != v {
				t.Errorf("%s: ring pair %d holds (%d, %d), want (42, %d)", c.name, k, f.w[RingEpoch(k)], f.w[RingField(k)], v)
			}
		}
	}
	f := &fakeRing{}
	f.w[RingParked] = uint64(e)
	boom := errors.New("device lost")
	if _, err := HandOver(f, e, call, func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a failing wait gave %v", err)
	}
}

// The doorbell, pair 0's epoch, is the last store: a kernel that sees it
// has every pair's field of the call already.
func TestHandOverRingsLast(t *testing.T) {
	f := &orderRing{}
	if _, err := HandOver(f, 7, RingCall{In: 1, Out: 2, Count: 3, Stride: 4, Root: 5, Linger: 6}, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := len(f.stores); n != 2*RingFields || f.stores[n-1] != RingEpoch(0) {
		t.Fatalf("stores %v: want %d, the doorbell (word %d) last", f.stores, 2*RingFields, RingEpoch(0))
	}
	for k := range RingFields {
		fi, ei := -1, -1
		for i, w := range f.stores {
			if w == RingField(k) {
				fi = i
			}
			if w == RingEpoch(k) {
				ei = i
			}
		}
		if fi < 0 || ei < fi {
			t.Errorf("pair %d: field stored at %d, epoch at %d: the field must come first", k, fi, ei)
		}
	}
}

type orderRing struct {
	fakeRing
	stores []int
}

func (o *orderRing) Store(i int, v uint64) { o.stores = append(o.stores, i); o.fakeRing.Store(i, v) }
