package devsync

// Limits of one node's team and of one kernel's grid. The flag area is
// sized for the limits, so every rank's layout is the same whatever the
// team and grid (cuda/kernels/node.cu has the same constants).
const (
	MaxRanks  = 8   // GPUs of an NVSwitch node
	MaxBlocks = 128 // CTAs of one kernel
	MaxPhases = 2   // signal rounds of one call (two-shot allreduce has two)
	Align     = 16  // bytes of a vector load; slots and parts start on it
)

// FlagBytes is the size of the flag area at the start of every scratch
// region: one 8-byte word per (phase, block, source rank).
const FlagBytes = MaxPhases * MaxBlocks * MaxRanks * 8

// FlagWord is the index (in 8-byte words from the region's start) of the
// word that rank src writes into another rank's region to signal phase of
// block.
func FlagWord(phase, block, src int) int {
	return (phase*MaxBlocks+block)*MaxRanks + src
}

// SlotBytes rounds a slot's payload up to Align, so the second slot
// starts aligned.
func SlotBytes(payload int) int { return (payload + Align - 1) / Align * Align }

// SlotOffset is the byte offset of data slot parity (0 or 1) in a scratch
// region whose slots are slotBytes long (already rounded by SlotBytes):
// after the flag area and the LL area (ll.go).
func SlotOffset(parity, slotBytes int) int { return FlagBytes + 2*LLAreaBytes + parity*slotBytes }

// ScratchBytes is the size of a scratch region with two slots of
// slotBytes (already rounded by SlotBytes).
func ScratchBytes(slotBytes int) int { return FlagBytes + 2*LLAreaBytes + 2*slotBytes }

// ZeroedBytes is the start of a scratch region that must be all zeros
// before its first call: the flag area and the LL area.
const ZeroedBytes = FlagBytes + 2*LLAreaBytes

// DoneBytes is the size of a rank's done words: one 8-byte word per block
// of a kernel, in host-mapped memory (doc.go, "Completion").
const DoneBytes = MaxBlocks * 8
