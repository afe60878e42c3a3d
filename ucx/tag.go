package ucx

import "fmt"

// Tag is a 64-bit UCP tag. A receive matches a message when
// (message tag & mask) == (receive tag & mask).
//
// MakeTag packs the fields goring's executor needs into one tag:
//
//	bit 63            44 43            24 23                    0
//	    [ sender: 20 bits][ sequence: 20 ][ step tag: 24 bits     ]
//
// sender is the sending rank (up to 1 048 575), sequence numbers the
// collective call on the communicator (callers wrap it modulo 1<<20; two
// collectives 1<<20 calls apart must not be in flight at once), and step
// is the program step's tag (sched.Step tag, up to 16 777 215). A receive
// that knows its sender uses MaskFull; one that takes any sender uses
// MaskAnySender and reads the sender from the completion's tag.
type Tag uint64

const (
	TagSenderBits = 20
	TagSeqBits    = 20
	TagStepBits   = 24

	tagStepShift   = 0
	tagSeqShift    = TagStepBits
	tagSenderShift = TagStepBits + TagSeqBits

	// MaxTagSender, MaxTagSeq and MaxTagStep are the largest field values.
	MaxTagSender = 1<<TagSenderBits - 1
	MaxTagSeq    = 1<<TagSeqBits - 1
	MaxTagStep   = 1<<TagStepBits - 1

	// MaskFull matches every bit: exactly one (sender, sequence, step).
	MaskFull Tag = ^Tag(0)
	// MaskAnySender matches sequence and step from any sender.
	MaskAnySender Tag = 1<<tagSenderShift - 1
)

// MakeTag packs (sender, sequence, step) as documented on Tag. A value out
// of its field's range is an error, never silently truncated: two
// different steps must not share a tag.
func MakeTag(sender, seq, step int) (Tag, error) {
	if sender < 0 || sender > MaxTagSender {
		return 0, fmt.Errorf("ucx: tag sender %d out of range [0, %d]", sender, MaxTagSender)
	}
	if seq < 0 || seq > MaxTagSeq {
		return 0, fmt.Errorf("ucx: tag sequence %d out of range [0, %d] (wrap it modulo %d)", seq, MaxTagSeq, MaxTagSeq+1)
	}
	if step < 0 || step > MaxTagStep {
		return 0, fmt.Errorf("ucx: tag step %d out of range [0, %d]", step, MaxTagStep)
	}
	return Tag(sender)<<tagSenderShift | Tag(seq)<<tagSeqShift | Tag(step)<<tagStepShift, nil
}

// Sender is the sender field of a tag built by MakeTag.
func (t Tag) Sender() int { return int(t >> tagSenderShift & MaxTagSender) }

// Seq is the sequence field of a tag built by MakeTag.
func (t Tag) Seq() int { return int(t >> tagSeqShift & MaxTagSeq) }

// Step is the step field of a tag built by MakeTag.
func (t Tag) Step() int { return int(t >> tagStepShift & MaxTagStep) }

// String shows the three fields, e.g. "tag(sender=3 seq=17 step=2)".
func (t Tag) String() string {
	return fmt.Sprintf("tag(sender=%d seq=%d step=%d)", t.Sender(), t.Seq(), t.Step())
}
