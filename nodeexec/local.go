package nodeexec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// Local is one rank's side of a team's node collectives (see the package
// comment). Its methods are called by one goroutine at a time.
type Local struct {
	dev        *cuda.Device
	rank, size int
	slot       int // bytes of each data slot (devsync.SlotBytes)
	scratch    *cuda.Buffer
	peers      []*cuda.Buffer   // the peers' regions, mapped (nil at rank)
	ptrs       []cuda.DevicePtr // every rank's region as this device addresses it
	words      *cuda.HostBuffer // the abort word (offset 0), the status word (8), the done words (doneAt)
	abortPtr   cuda.DevicePtr
	statusPtr  cuda.DevicePtr
	donePtr    cuda.DevicePtr
	abort      *atomic.Uint64
	status     *atomic.Uint64
	done       []atomic.Uint64 // one per CTA of a kernel (devsync "Completion")
	stream     *cuda.Stream
	epoch      devsync.Epoch // the last call's; the next is epoch.Next()
	running    bool
	blocks     int   // CTAs of the running call's last kernel
	ownStream  bool  // the running call is on the team's own stream
	polls      int   // Progress's looks at the running call
	broken     error // an aborted call leaves the flags unusable: every later call fails with it
	grid       func(bytes int) cuda.NodeGrid
	// Resident kernels (resident.go): the ring in the host-mapped words
	// (ringAt) and its device address, the mailbox, the linger, the
	// kernel that may take the next call, and when the last call's end
	// was seen.
	ring    ring
	ringPtr cuda.DevicePtr
	mailbox *cuda.Buffer
	linger  time.Duration
	shared  bool // the ranks share a GPU: no kernel stays resident
	res     residentKernel
	resided bool // a resident kernel was launched: Close waits for it to leave
	handed  int
	lastEnd time.Time
	backoff int // calls launched without a linger after the last kernel that waited in vain
	skip    int // of those, still to come
	llMax   int // the largest LL call (ll.go), bytes a rank sends a peer; 0: none
}

// doneAt is the done words' offset in the host-mapped words: a cache line
// of their own, away from the words the host writes.
const doneAt = 64

// ringAt is the resident kernels' ring's offset in the host-mapped words
// (devsync.RingBytes, after the done words, cache-line aligned).
const ringAt = doneAt + devsync.DoneBytes

// errorCheckEvery is how many looks at a running call's done words
// Progress takes between two driver queries for an error (a kernel that
// faulted never writes its words; the query reports the context's error).
const errorCheckEvery = 1024

// pairSmallBytes is the largest message (an allreduce's vector, a
// reduce_scatter's input, an allgather's output) a pair's kernels run on
// pairSmallBlocks CTAs instead of cuda.DefaultNodeGrid's.
const pairSmallBytes, pairSmallBlocks = 128 << 10, 4

// gridFor is the launch shape of a team of size ranks. A pair's small
// calls take 4 CTAs where the default gives 16 from 16 KiB: each CTA
// signals and waits on its own flags, and on two H200s 4 CTAs were
// 0.4-1.9 µs faster a call from 32 to 128 KiB for every kernel, while
// from 256 KiB grids of 16 CTAs or more were the faster (TestNodeBench,
// two runs; docs/gpu.md "Small calls on two H200s: the grid"). Larger
// teams keep the default, whose small sizes were swept on four GPUs
// only at 16 and 64 KiB.
func gridFor(size int) func(bytes int) cuda.NodeGrid {
	if size != 2 {
		return cuda.DefaultNodeGrid
	}
	return func(bytes int) cuda.NodeGrid {
		g := cuda.DefaultNodeGrid(bytes)
		if bytes <= pairSmallBytes && g.Blocks > pairSmallBlocks {
			g.Blocks = pairSmallBlocks
		}
		return g
	}
}

// New allocates rank's scratch region on dev for slots of slotBytes (a
// multiple of devsync.Align), zeroes its flags, and prepares the abort,
// status and done words and the stream. The region is not usable until
// Open.
func New(dev *cuda.Device, rank, size, slotBytes int) (l *Local, err error) {
	switch {
	case size < 2 || size > devsync.MaxRanks || rank < 0 || rank >= size:
		return nil, fmt.Errorf("nodeexec: rank %d of %d (2 to %d ranks)", rank, size, devsync.MaxRanks)
	case slotBytes <= 0 || slotBytes%devsync.Align != 0:
		return nil, fmt.Errorf("nodeexec: slots of %d bytes (a positive multiple of %d)", slotBytes, devsync.Align)
	}
	l = &Local{dev: dev, rank: rank, size: size, slot: slotBytes, epoch: devsync.FirstEpoch - 1, grid: gridFor(size), linger: DefaultLinger, llMax: DefaultLLMax}
	defer func() {
		if err != nil {
			_ = l.Close()
		}
	}()
	if l.scratch, err = dev.Alloc(devsync.ScratchBytes(slotBytes)); err != nil {
		return nil, fmt.Errorf("nodeexec: scratch of %d bytes: %w", devsync.ScratchBytes(slotBytes), err)
	}
	if err = l.scratch.Memset(0, devsync.ZeroedBytes, 0); err != nil {
		return nil, err
	}
	if l.words, err = dev.AllocMappedHost(ringAt + devsync.RingBytes); err != nil {
		return nil, err
	}
	if l.abort, err = l.words.Word(0); err != nil {
		return nil, err
	}
	if l.status, err = l.words.Word(8); err != nil {
		return nil, err
	}
	l.abort.Store(0)
	l.status.Store(0)
	if l.abortPtr, err = l.words.MappedAddr(dev, 0); err != nil {
		return nil, err
	}
	if l.statusPtr, err = l.words.MappedAddr(dev, 8); err != nil {
		return nil, err
	}
	if l.done, err = l.words.Words(doneAt, devsync.DoneBytes/8); err != nil {
		return nil, err
	}
	if l.donePtr, err = l.words.MappedAddr(dev, doneAt); err != nil {
		return nil, err
	}
	words, err := l.words.Words(ringAt, devsync.RingWords)
	if err != nil {
		return nil, err
	}
	for i := range words {
		words[i].Store(0)
	}
	l.ring = words
	if l.ringPtr, err = l.words.MappedAddr(dev, ringAt); err != nil {
		return nil, err
	}
	if l.mailbox, err = dev.Alloc(devsync.MailboxBytes); err != nil {
		return nil, err
	}
	if err = l.mailbox.Memset(0, devsync.MailboxBytes, 0); err != nil {
		return nil, err
	}
	if l.stream, err = dev.NewStream(); err != nil {
		return nil, err
	}
	return l, nil
}

// A card is what a rank tells its peers: "GNX1", the slot size (uint64),
// the region's IPC handle and the device's PCI bus id (uint16 length +
// bytes), little-endian.
const cardMagic = "GNX1"

// Card is this rank's card for the peers' Open.
func (l *Local) Card() ([]byte, error) {
	h, err := l.scratch.IPCHandle()
	if err != nil {
		return nil, err
	}
	bus, err := l.dev.PCIBusID()
	if err != nil {
		return nil, err
	}
	return encodeCard(card{slot: l.slot, ipc: h, bus: bus}), nil
}

func encodeCard(c card) []byte {
	b := append([]byte(cardMagic), make([]byte, 8)...)
	binary.LittleEndian.PutUint64(b[4:], uint64(c.slot))
	b = append(b, c.ipc[:]...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(c.bus)))
	return append(b, c.bus...)
}

type card struct {
	slot int
	ipc  cuda.IPCHandle
	bus  string
}

func decodeCard(b []byte) (card, error) {
	var c card
	n := len(cardMagic) + 8 + len(c.ipc) + 2
	if len(b) < n || string(b[:4]) != cardMagic {
		return c, errors.New("not a node card of this version")
	}
	c.slot = int(binary.LittleEndian.Uint64(b[4:]))
	copy(c.ipc[:], b[12:])
	bl := int(binary.LittleEndian.Uint16(b[n-2:]))
	if bl > len(b)-n {
		return c, fmt.Errorf("PCI bus id of %d bytes overruns the %d-byte card", bl, len(b))
	}
	c.bus = string(b[n : n+bl])
	return c, nil
}

// Agree says whether every rank can take part, from every rank's card
// (the same verdict on every rank, as it reads the same cards): the same
// slot size, and one GPU per rank unless sharedGPU (two ranks' processes
// on one GPU run their kernels only in turns, each spinning through its
// turn for the other: tests of the protocol on a machine of one GPU
// allow it, a team never does).
func Agree(cards [][]byte, size int, sharedGPU bool) error {
	if len(cards) != size {
		return fmt.Errorf("nodeexec: %d cards for %d ranks", len(cards), size)
	}
	seen := map[string]int{}
	var slot int
	for r, b := range cards {
		c, err := decodeCard(b)
		if err != nil {
			return fmt.Errorf("nodeexec: card of rank %d: %w", r, err)
		}
		if r == 0 {
			slot = c.slot
		} else if c.slot != slot {
			return fmt.Errorf("nodeexec: rank %d has slots of %d bytes, rank 0 of %d", r, c.slot, slot)
		}
		if q, ok := seen[c.bus]; ok && !sharedGPU {
			return fmt.Errorf("nodeexec: ranks %d and %d share the GPU at %s", q, r, c.bus)
		}
		seen[c.bus] = r
	}
	return nil
}

// Open maps every peer's region (cards[r] is rank r's Card; Agree, given
// the same sharedGPU, has accepted them).
func (l *Local) Open(cards [][]byte, sharedGPU bool) error {
	if err := Agree(cards, l.size, sharedGPU); err != nil {
		return err
	}
	// The regions become the Local's only once every one is mapped: a
	// Local with a peer's address missing must refuse to Begin.
	peers := make([]*cuda.Buffer, l.size)
	ptrs := make([]cuda.DevicePtr, l.size)
	for r, b := range cards {
		if r == l.rank {
			ptrs[r] = l.scratch.Ptr()
			continue
		}
		c, _ := decodeCard(b)
		p, err := l.dev.OpenIPC(c.ipc, devsync.ScratchBytes(c.slot))
		if err != nil {
			for _, q := range peers {
				if q != nil {
					_ = q.Free()
				}
			}
			return fmt.Errorf("nodeexec: mapping rank %d's scratch: %w", r, err)
		}
		peers[r], ptrs[r] = p, p.Ptr()
	}
	l.peers, l.ptrs, l.shared = peers, ptrs, sharedGPU
	return nil
}

// Call is one collective on this rank's device buffers. Count follows
// devsync.Shape: the whole vector of an allreduce or a bcast, each rank's
// output block of a reduce_scatter, each rank's input block of an
// allgather.
type Call struct {
	Collective coll.Collective
	Dtype      coll.Dtype
	Op         coll.Op
	Count      int
	In, Out    cuda.DevicePtr
	// Root is a bcast's root rank (its In is read; every rank's Out is
	// written, the root's too unless it is In).
	Root int
	// Stride is a reduce_scatter's elements between input blocks (0:
	// Count): a piece of a larger one (pieces.go).
	Stride int
}

// oneShotMax is the largest allreduce vector the one-shot kernel takes
// on a team of ranks: above it the two-shot one (a reduce-scatter by
// stores, then an allgather by loads) runs. On more than two ranks
// two-shot moves less over NVLink (a rank loads one chunk from every
// peer, not every peer's whole vector) and measured faster from 4 MiB
// (4x H100: 47.0 against 50.7 µs at 4 MiB; 22.3 against 20.2 at 1 MiB).
// A pair moves the same bytes either way (half the vector each way,
// twice, or the whole of it once), and one-shot's single round of flags
// won up to 32 MiB on two H200s (best grids, µs: 15.8 against 20.1 at 2
// MiB, 22.7 against 26.6 at 4, 35.8 against 40.4 at 8, 124.1 against
// 125.3 at 32; 241.1 against 229.0 at 64; docs/gpu.md "Node kernels on
// two H200s").
func oneShotMax(ranks int) int {
	if ranks == 2 {
		return 32 << 20
	}
	return 2 << 20
}

// shape is c's devsync shape, and the bytes DefaultNodeGrid sizes by.
func (l *Local) shape(c Call) (devsync.Shape, int, error) {
	s := devsync.Shape{Ranks: l.size, Count: c.Count, ElemSize: c.Dtype.Size()}
	bytes := c.Count * c.Dtype.Size()
	switch c.Collective {
	case coll.Allreduce:
		s.Alg = devsync.TwoShotAllreduce
		if bytes <= oneShotMax(l.size) {
			s.Alg = devsync.OneShotAllreduce
		}
	case coll.ReduceScatter:
		s.Alg, s.Stride, bytes = devsync.ReduceScatter, c.Stride, bytes*l.size
	case coll.Allgather:
		s.Alg, s.ElemSize, s.Count = devsync.Allgather, 1, bytes
		bytes *= l.size
	case coll.Bcast:
		s.Alg, s.ElemSize, s.Count, s.Root = devsync.Bcast, 1, bytes, c.Root
		if c.Root < 0 || c.Root >= l.size {
			return s, 0, fmt.Errorf("nodeexec: bcast root %d of %d ranks", c.Root, l.size)
		}
	default:
		return s, 0, fmt.Errorf("nodeexec: %s has no node kernel", c.Collective)
	}
	if c.Collective.Reduces() && !coll.Supports(c.Op, c.Dtype) {
		return s, 0, fmt.Errorf("nodeexec: %s is not defined on %s", c.Op, c.Dtype)
	}
	return l.llShape(s), bytes, nil
}

// Fits says whether c runs here: a collective with a node kernel whose
// data fits one slot, or an allreduce or reduce_scatter of any size (it
// runs in pieces that fit: pieces.go).
func (l *Local) Fits(c Call) bool {
	s, _, err := l.shape(c)
	return err == nil && (s.SlotBytes() <= l.slot || l.pieceCount(c) > 0)
}

// Algorithm names the kernel c runs (devsync's name): for a call in
// pieces, its first piece's (the largest), since each piece chooses its
// kernel by its own size.
func (l *Local) Algorithm(c Call) string {
	s, _, err := l.shape(c)
	if err != nil {
		return ""
	}
	if per := l.pieceCount(c); s.SlotBytes() > l.slot && per > 0 {
		p := c
		p.Count = min(per, c.Count)
		if s, _, err = l.shape(p); err != nil {
			return ""
		}
	}
	return s.Alg.String()
}

// Begin launches this rank's kernel of c, the team's next call, on the
// team's own stream. Every rank must begin the same calls in the same
// order.
func (l *Local) Begin(c Call) error { return l.BeginOn(c, nil) }

// BeginOn is Begin on stream s, the caller's (nil: the team's own): the
// call's kernels run after the work the caller queued on s before, and
// the caller's later work on s runs after them, with no host round trip
// between (UCC's triggered post on a CUDA stream, as a framework posts
// its collectives). The previous call has completed (a call begins only
// after Progress saw it end), so the kernels need no order against the
// team's own stream; Progress looks at the done words of the last
// kernel, with no operation on s after it.
func (l *Local) BeginOn(c Call, on *cuda.Stream) error {
	stream := l.stream
	if on != nil {
		stream = on
	}
	switch {
	case l.broken != nil:
		return l.broken
	case l.ptrs == nil:
		return errors.New("nodeexec: Begin before Open")
	case l.running:
		return errors.New("nodeexec: Begin while a call runs")
	}
	s, bytes, err := l.shape(c)
	if err != nil {
		return err
	}
	pieces := []Call{c}
	if s.SlotBytes() > l.slot {
		if pieces = l.pieces(c); pieces == nil {
			return fmt.Errorf("nodeexec: a %s of %d bytes needs slots of %d bytes, the team's are %d", c.Collective, bytes, s.SlotBytes(), l.slot)
		}
	}
	for i, p := range pieces {
		if s, bytes, err = l.shape(p); err != nil {
			return err
		}
		e, g := l.epoch.Next(), l.grid(bytes)
		nc := cuda.NodeCall{Alg: s.Alg, Dtype: p.Dtype, Op: p.Op, Scratch: l.ptrs, Rank: l.rank, In: p.In, Out: p.Out,
			Count: s.Count, Stride: s.Stride, Root: s.Root, SlotBytes: l.slot, Epoch: e, Abort: l.abortPtr, Status: l.statusPtr, Done: l.donePtr}
		var cleared bool
		if cleared, err = l.clearLL(stream, e); err == nil {
			err = l.start(stream, nc, g, on == nil && len(pieces) == 1 && !cleared)
		}
		if err != nil {
			// The peers whose launches worked wait in this piece's epoch
			// (the first piece's too): a later call of this rank would
			// take that epoch and release their kernels with its own
			// data. The team's node calls cannot go on.
			broken := fmt.Errorf("nodeexec: the team's node calls stopped: launching call %d (piece %d of %d): %w", e, i+1, len(pieces), err)
			if i > 0 {
				// This rank's earlier pieces are queued and may be
				// waiting for peers: the call fails only once they have
				// ended, so that none writes the output, or reads the
				// scratch, after the caller was told it failed.
				l.running, l.ownStream = true, stream == l.stream
				broken = errors.Join(broken, l.Abort(err))
			}
			l.broken = broken
			return l.broken
		}
		l.epoch, l.blocks = e, g.Blocks // launched: the peers' flags now count this piece
	}
	l.running, l.polls, l.ownStream = true, 0, stream == l.stream
	return nil
}

// ended reports whether every CTA of the running call's last kernel has
// released its epoch into its done word.
func (l *Local) ended() bool {
	return devsync.Ended(func(b int) uint64 { return l.done[b].Load() }, l.blocks, l.epoch)
}

// checkDevice reports a sticky error of the device (a kernel that
// faulted: its done words never come), through the team's own stream;
// and, for a call on that stream, kernels that completed without their
// done words saying so, which would otherwise be waited for for ever.
func (l *Local) checkDevice() error {
	idle, err := l.stream.Done()
	if err == nil && idle && l.ownStream && !l.ended() {
		err = fmt.Errorf("call %d's kernels completed, but the done words of its %d blocks do not hold its epoch", l.epoch, l.blocks)
	}
	if err != nil {
		l.running = false
		l.broken = fmt.Errorf("nodeexec: the team's node calls stopped: %w", err)
		return l.broken
	}
	return nil
}

// Progress reports whether the running call has ended, without blocking;
// a call the abort word stopped ends with an error.
func (l *Local) Progress() (bool, error) {
	if !l.running {
		return true, nil
	}
	if !l.ended() {
		if l.polls++; l.polls%errorCheckEvery == 0 {
			return false, l.checkDevice()
		}
		return false, nil
	}
	l.running, l.lastEnd = false, time.Now()
	if st := l.status.Load(); st != 0 {
		l.broken = fmt.Errorf("nodeexec: call %d was aborted", st)
		return false, l.broken
	}
	return true, nil
}

// Abort stops the running call (a peer died: its flags will never come)
// and waits for the kernel to end; the team's node calls are over.
func (l *Local) Abort(cause error) error {
	l.broken = fmt.Errorf("nodeexec: the team's node calls stopped: %w", cause)
	if !l.running {
		return nil
	}
	l.abort.Store(devsync.AbortWord(l.size)) // non-zero: every wait ends
	for !l.ended() {
		if err := l.checkDevice(); err != nil {
			return err
		}
		time.Sleep(20 * time.Microsecond)
	}
	l.running = false
	return nil
}

// Close releases the mappings, the region, the words and the stream; a
// call still running is aborted first.
func (l *Local) Close() error {
	var errs []error
	if l.running {
		errs = append(errs, l.Abort(errors.New("closed")))
	}
	if err := l.retire(); err != nil {
		return errors.Join(append(errs, err)...) // freeing under a kernel that reads it would fault the context
	}
	for _, p := range l.peers {
		if p != nil {
			errs = append(errs, p.Free())
		}
	}
	l.peers, l.ptrs = nil, nil
	if l.stream != nil {
		errs = append(errs, l.stream.Destroy())
	}
	if l.words != nil {
		errs = append(errs, l.words.Free())
	}
	if l.mailbox != nil {
		errs = append(errs, l.mailbox.Free())
	}
	if l.scratch != nil {
		errs = append(errs, l.scratch.Free())
	}
	// A second Close frees nothing twice and touches no freed word.
	l.stream, l.words, l.mailbox, l.scratch, l.ring = nil, nil, nil, nil, nil
	return errors.Join(errs...)
}
