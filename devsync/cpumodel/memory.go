package cpumodel

import "github.com/goring-hpc/goring/devsync"

// memory is what peers share: every rank's two data slots with the call
// that stored each byte, every rank's LL area (payload, the tag a GPU
// would read with each 4-byte word, and the call that stored each byte),
// every rank's flag words, the host-mapped abort word (visible at once:
// the host writes it, nobody buffers it), and what the host sees: every
// rank's done words and outputs.
type memory struct {
	slot    [][2][]byte
	tag     [][2][]int // call+1 that stored each byte; 0 never
	ll      [][2][]byte
	llTag   [][2][]uint32 // per 4-byte word: the tag stored with it (0: cleared)
	llCall  [][2][]int    // call+1 that stored each byte; 0 never
	flags   [][]uint64
	abort   uint64
	done    [][]uint64 // [rank][block]
	outputs [][][]byte // [call][rank]: the run's Result.Outputs
}

func newMemory(ranks, slotBytes, llBytes int) *memory {
	m := &memory{slot: make([][2][]byte, ranks), tag: make([][2][]int, ranks), flags: make([][]uint64, ranks),
		ll: make([][2][]byte, ranks), llTag: make([][2][]uint32, ranks), llCall: make([][2][]int, ranks)}
	for r := range ranks {
		for p := range 2 {
			m.ll[r][p], m.llTag[r][p], m.llCall[r][p] = make([]byte, llBytes), make([]uint32, llBytes/4), make([]int, llBytes)
			m.slot[r][p] = make([]byte, slotBytes)
			for i := range m.slot[r][p] {
				m.slot[r][p][i] = 0xa5 // never a plausible value
			}
			m.tag[r][p] = make([]int, slotBytes)
		}
		m.flags[r] = make([]uint64, devsync.FlagBytes/8)
	}
	m.done = make([][]uint64, ranks)
	for r := range m.done {
		m.done[r] = make([]uint64, devsync.MaxBlocks)
	}
	return m
}

// store is one buffered store: bytes into a slot or an output, one
// 4-byte word of an LL line with its tag (single-copy atomic: ll.go), a
// flag word, or a done word.
type store struct {
	flag, out, done bool
	ll              bool
	llTag           uint32
	release         bool // visible only after the agent's earlier stores
	rank, parity    int  // whose memory; the slot (data stores)
	off             int  // byte offset in the slot or the output
	data            []byte
	tag             int
	call            int    // an output's call
	word            int    // flag index; a done word's block
	val             uint64 // a flag's or a done word's epoch
}

// apply makes s visible to every agent.
func (m *memory) apply(s store) {
	switch {
	case s.flag:
		// A flag store never lowers a word: a later call's signal may
		// already be there (the GPU's stores to one word are in order).
		m.flags[s.rank][s.word] = max(m.flags[s.rank][s.word], s.val)
		return
	case s.done:
		m.done[s.rank][s.word] = max(m.done[s.rank][s.word], s.val)
		return
	case s.out:
		copy(m.outputs[s.call][s.rank][s.off:], s.data)
		return
	case s.ll:
		copy(m.ll[s.rank][s.parity][s.off:], s.data)
		m.llTag[s.rank][s.parity][s.off/4] = s.llTag
		for i := range s.data {
			m.llCall[s.rank][s.parity][s.off+i] = s.tag
		}
		return
	}
	copy(m.slot[s.rank][s.parity][s.off:], s.data)
	for i := range s.data {
		m.tag[s.rank][s.parity][s.off+i] = s.tag
	}
}
