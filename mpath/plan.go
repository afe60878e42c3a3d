package mpath

import (
	"fmt"

	"github.com/goring-hpc/goring/model"
)

// Buf names the memory an op reads or writes.
type Buf uint8

const (
	Src   Buf = iota // the sender's buffer
	Dst              // the receiver's buffer
	Stage            // a staged path's staging buffer (Op.Path says which)
)

// Op is one copy of a Plan.
type Op struct {
	Path   int // index into Plan.Paths
	Hop    int // 0: a direct copy or a first hop (to staging); 1: a second hop (from staging)
	Stream int // logical stream: 0 direct, 1+2j and 2+2j the hops of staged path j
	From   Buf
	To     Buf
	// FromOff and ToOff are byte offsets in From and To; N the length.
	FromOff, ToOff, N int64
	// Waits are indices of earlier ops on other streams that must finish
	// before this one starts (ops of one stream run in order anyway).
	Waits []int
}

// PathPlan is one used path of a Plan.
type PathPlan struct {
	Path   model.Path
	Bytes  int64 // bytes the path carries
	Chunks int   // pieces (1 for direct)
	Slots  int   // staging slots (0 for direct)
	// SlotBytes is the size of one staging slot (the largest chunk); the
	// staging buffer holds Slots of them.
	SlotBytes int64
	// Off is where the path's bytes start in the source and destination.
	Off int64
}

// StageBytes is the staging memory the path needs.
func (p PathPlan) StageBytes() int64 { return int64(p.Slots) * p.SlotBytes }

// Plan is the schedule of one transfer.
type Plan struct {
	Bytes   int64
	Paths   []PathPlan
	Ops     []Op
	Streams int
	// Waited[i] reports whether a later op waits on op i (an executor
	// records an event after exactly those).
	Waited []bool
}

// Build schedules split, whose paths carry consecutive ranges of the
// message in the split's order. Each staged path gets at most maxStage
// bytes of staging: a path with more chunks than fit cycles its slots.
func Build(split model.Split, maxStage int64) (*Plan, error) {
	if split.Bytes <= 0 {
		return nil, fmt.Errorf("mpath: a transfer of %d bytes", split.Bytes)
	}
	p := &Plan{Bytes: split.Bytes, Streams: 1}
	var off int64
	staged := 0
	for _, sh := range split.Paths {
		if sh.Bytes <= 0 {
			continue
		}
		pp := PathPlan{Path: sh.Path, Bytes: sh.Bytes, Chunks: 1, Off: off}
		if sh.Path.Staged {
			pp.Chunks = max(sh.Chunks, 1)
			pp.SlotBytes = (sh.Bytes + int64(pp.Chunks) - 1) / int64(pp.Chunks)
			pp.Slots = pp.Chunks
			if maxStage > 0 && int64(pp.Slots)*pp.SlotBytes > maxStage {
				pp.Slots = int(maxStage / pp.SlotBytes)
			}
			if pp.Slots < 1 {
				return nil, fmt.Errorf("mpath: path %s: a %d-byte chunk does not fit %d bytes of staging", sh.Path.Name, pp.SlotBytes, maxStage)
			}
			staged++
		}
		p.Paths = append(p.Paths, pp)
		off += sh.Bytes
	}
	if off != split.Bytes {
		return nil, fmt.Errorf("mpath: the split's paths carry %d bytes of a %d-byte message", off, split.Bytes)
	}
	p.Streams = 1 + 2*staged
	j := 0
	for i, pp := range p.Paths {
		if !pp.Path.Staged {
			p.add(Op{Path: i, Stream: 0, From: Src, To: Dst, FromOff: pp.Off, ToOff: pp.Off, N: pp.Bytes})
			continue
		}
		p.addStaged(i, pp, 1+2*j)
		j++
	}
	return p, nil
}

// addStaged adds the two hops of every chunk of staged path i.
func (p *Plan) addStaged(i int, pp PathPlan, in int) {
	first := make([]int, pp.Chunks)  // op index of each chunk's first hop
	second := make([]int, pp.Chunks) // and second hop
	for c := 0; c < pp.Chunks; c++ {
		lo, hi := chunkRange(pp.Bytes, pp.Chunks, c)
		slot := int64(c%pp.Slots) * pp.SlotBytes
		hop0 := Op{Path: i, Hop: 0, Stream: in, From: Src, To: Stage, FromOff: pp.Off + lo, ToOff: slot, N: hi - lo}
		if c >= pp.Slots {
			hop0.Waits = []int{second[c-pp.Slots]} // the slot has drained
		}
		first[c] = p.add(hop0)
		second[c] = p.add(Op{Path: i, Hop: 1, Stream: in + 1, From: Stage, To: Dst, FromOff: slot, ToOff: pp.Off + lo, N: hi - lo, Waits: []int{first[c]}})
	}
}

func (p *Plan) add(op Op) int {
	p.Ops = append(p.Ops, op)
	p.Waited = append(p.Waited, false)
	for _, w := range op.Waits {
		p.Waited[w] = true
	}
	return len(p.Ops) - 1
}

// chunkRange is chunk c of k over n bytes: sizes differ by at most one
// byte, larger first.
func chunkRange(n int64, k, c int) (lo, hi int64) {
	q, r := n/int64(k), n%int64(k)
	lo = int64(c)*q + min(int64(c), r)
	hi = lo + q
	if int64(c) < r {
		hi++
	}
	return lo, hi
}
