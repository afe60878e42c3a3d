package devsync

// # Resident kernels
//
// A small call is mostly overhead: the host's launch (a few µs in the
// driver) and the time until the launched kernel runs on the GPU. A
// resident kernel takes the team's next calls without a launch: after
// its call it stays on the GPU for a while (the linger), polling a ring
// in host-mapped memory, and the host hands it the next call by writing
// the call's fields and then its epoch into the ring (a doorbell). CTA 0
// polls the ring and passes each call to the kernel's other CTAs through
// a mailbox in device memory; every CTA then runs the call exactly as a
// launched kernel would (the same plan, flags, slots and done words), so
// peers cannot tell, and each rank may launch or hand a call as it likes.
//
// A resident kernel never waits for the host for longer than its linger:
// it leaves when no call came in that time, when the host asks it to
// (the stop word), or when the abort word is set. So work that waits for
// the whole device (a device synchronisation, a free) waits at most the
// linger, and a kernel of the same stream queued behind it runs after at
// most that.
//
// Leaving races with the host's next doorbell. The kernel, before it
// leaves, parks: it stores its last epoch into the parked word, fences
// at system scope (sequentially consistent), and loads the ring's epoch
// again; the host stores the epoch and then loads the parked word, also
// ordered. One of the two must see the other's store (HandOver, and the
// store-buffering check in resident_test.go), so either the kernel sees
// the doorbell and takes the call, or the host sees the kernel parked
// and waits for its final word, which says whether it took the call
// (Took) or left (Left) — then the host launches the call instead.

// Ring words: indices of 8-byte words from the ring's start. The call's
// fields are pairs (epoch, field) of 16 bytes, pair k at words 2k and
// 2k+1, so that a thread of the kernel loads a field with its epoch in
// one load over PCIe (six threads, one pair each: the fields arrive with
// the doorbell, not a round trip each after it). Pair 0's epoch is the
// doorbell, stored last. Within a pair the host stores the field before
// the epoch, and a thread that sees its pair's epoch takes the field of
// the same 16-byte load: this leans on the GPU's aligned 16-byte load of
// pinned memory being served from one snapshot of the host's cache line
// (one PCIe read), which held in every run here (x86 hosts, H200s); the
// call's outputs compared in the tests would show a torn pair. The host writes the first two cache lines (the
// pairs and the stop word); the kernel writes the third (parked, final).
const (
	FieldIn     = iota // the handed call's input, a device address
	FieldOut           // its output
	FieldCount         // Shape.Count
	FieldStride        // Shape.BlockStride
	FieldRoot          // bcast's root
	FieldLinger        // ns the kernel waits for the call after this one
	RingFields         // pairs in the ring
)

const (
	RingStop   = 12 // the host asks the kernel whose last call is this epoch, or an earlier one, to leave
	RingParked = 16 // the epoch after whose call the kernel parked
	RingFinal  = 17 // Took or Left of the parked epoch
	RingWords  = 24
)

// RingEpoch and RingField are the words of pair k.
func RingEpoch(k int) int { return 2 * k }
func RingField(k int) int { return 2*k + 1 }

// RingBytes is the size of a team's ring in host-mapped memory.
const RingBytes = RingWords * 8

// MailboxBytes is the size of a resident kernel's mailbox in device
// memory: the word that CTA 0 releases (the next epoch, or LeaveMark of
// the last one), then the call's RingFields fields.
const MailboxBytes = 64

// LeaveMark marks a mailbox word that tells the CTAs to leave after the
// epoch in its low bits.
const LeaveMark = uint64(1) << 63

// Took is the final word of a kernel that parked after call e and then
// saw the doorbell of call e+1: it runs that call.
func Took(e Epoch) uint64 { return uint64(e)<<1 | 1 }

// Left is the final word of a kernel that parked after call e and left.
func Left(e Epoch) uint64 { return uint64(e) << 1 }

// RingCall is what the host writes into the ring for one call.
type RingCall struct {
	In, Out, Count, Stride, Root, Linger uint64
}

// Words is a ring's words as the host sees them: loads and stores that
// are sequentially consistent with each other (Go's atomics).
type Words interface {
	Load(i int) uint64
	Store(i int, v uint64)
}

// HandOver gives call e+1 to the resident kernel whose last call was e
// and reports whether it took it; false means it left, and the host
// must launch the call. The call's fields are stored before its epoch,
// the doorbell; then the parked word tells whether the kernel may have
// missed it, in which case wait spins (it returns an error to give up:
// a device failure) until the final word settles it.
func HandOver(w Words, e Epoch, c RingCall, wait func() error) (took bool, err error) {
	fields := [RingFields]uint64{FieldIn: c.In, FieldOut: c.Out, FieldCount: c.Count, FieldStride: c.Stride, FieldRoot: c.Root, FieldLinger: c.Linger}
	for k := RingFields - 1; k >= 0; k-- { // pair 0 last: its epoch is the doorbell
		w.Store(RingField(k), fields[k])
		w.Store(RingEpoch(k), uint64(e.Next()))
	}
	if w.Load(RingParked) != uint64(e) {
		return true, nil // not parked after e: it will see the doorbell
	}
	for {
		switch f := w.Load(RingFinal); {
		case f == Took(e):
			return true, nil
		case f == Left(e):
			return false, nil
		case f>>1 > uint64(e):
			// A later parking's word: the kernel took call e+1, ran it
			// and parked again before this wait looked (the host may be
			// descheduled for longer than a linger). Its epoch moves on
			// only by taking calls, and no other kernel of the team can
			// run while this one does.
			return true, nil
		}
		if err := wait(); err != nil {
			return false, err
		}
	}
}
