package sched

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
)

// ProgramSchema names the JSON form of a Plan.
const ProgramSchema = "goring.program/v1"

// StepOp is what a step does.
type StepOp uint8

// Step operations of goring.program/v1.
const (
	OpSend   StepOp = iota + 1 // send Len bytes at Src to Peer with Tag
	OpRecv                     // receive Len bytes from Peer with Tag into Dst
	OpCopy                     // Dst = Src
	OpReduce                   // Dst = Dst OP Src, element-wise
)

var stepOpNames = [...]string{OpSend: "send", OpRecv: "recv", OpCopy: "copy", OpReduce: "reduce"}

func (o StepOp) String() string {
	if int(o) < len(stepOpNames) && stepOpNames[o] != "" {
		return stepOpNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Buf names one of a rank's three buffers.
type Buf uint8

// Buffers of goring.program/v1. Src is the caller's input, Dst the caller's
// output, Scratch memory the library allocates per collective.
const (
	BufSrc Buf = iota + 1
	BufDst
	BufScratch
)

var bufNames = [...]string{BufSrc: "src", BufDst: "dst", BufScratch: "scratch"}

func (b Buf) String() string {
	if int(b) < len(bufNames) && bufNames[b] != "" {
		return bufNames[b]
	}
	return fmt.Sprintf("buf(%d)", uint8(b))
}

// PathKind is the route a transfer should take, as a hint to the data plane.
type PathKind uint8

// Path kinds; PathAny (zero) means no hint.
const (
	PathAny    PathKind = iota
	PathDirect          // "direct": the peer link (NVLink, PCIe P2P)
	PathGPU             // "gpu:N": staged through GPU N of the node
	PathHost            // "host": staged through host memory
	PathRail            // "rail:N": over NIC rail N
)

// Path is an optional routing hint of a send.
type Path struct {
	Kind  PathKind
	Index uint8 // GPU or rail index for PathGPU and PathRail
	// Load is what else moves while the send runs (AnnotateLoads; zero:
	// not annotated). It is for a data plane that splits one transfer
	// over several paths, and is not part of goring.program/v1.
	Load StepLoad
}

func (p Path) String() string {
	switch p.Kind {
	case PathDirect:
		return "direct"
	case PathGPU:
		return fmt.Sprintf("gpu:%d", p.Index)
	case PathHost:
		return "host"
	case PathRail:
		return fmt.Sprintf("rail:%d", p.Index)
	}
	return ""
}

// Ref is a byte offset into one of a rank's buffers.
type Ref struct {
	Buf Buf
	Off int64
}

// Step is one operation of a rank's program.
//
// The layout is compact on purpose (48 bytes): a 4096-rank Parallel Rings
// plan has tens of millions of steps, and the dependency lists live in the
// owning RankProgram's pool rather than in a slice per step. A step's id is
// its index in RankProgram.Steps.
//
// Field use by op: send reads Src; recv writes Dst; copy and reduce read Src
// and write Dst. Peer and Tag are used by send and recv only.
type Step struct {
	SrcOff int64
	DstOff int64
	Len    int64
	Peer   int32
	Tag    int32
	depOff uint32
	depLen uint16
	Op     StepOp
	SrcBuf Buf
	DstBuf Buf
	Path   Path
}

// Src returns the step's read side.
func (s *Step) Src() Ref { return Ref{s.SrcBuf, s.SrcOff} }

// Dst returns the step's write side.
func (s *Step) Dst() Ref { return Ref{s.DstBuf, s.DstOff} }

// Sizes are a rank's buffer sizes in bytes.
type Sizes struct {
	Src, Dst, Scratch int64
}

// Of returns the size of buffer b.
func (z Sizes) Of(b Buf) int64 {
	switch b {
	case BufSrc:
		return z.Src
	case BufDst:
		return z.Dst
	case BufScratch:
		return z.Scratch
	}
	return 0
}

// RankProgram is the program of one rank: its steps in id order.
type RankProgram struct {
	Rank  int
	Node  int
	Local int
	Sizes Sizes
	Steps []Step
	deps  []int32
}

// Deps returns the ids of the steps step id waits for. The slice aliases
// the program's pool: do not modify it.
func (p *RankProgram) Deps(id int) []int32 {
	s := &p.Steps[id]
	return p.deps[s.depOff : s.depOff+uint32(s.depLen)]
}

// Plan is the programs of every rank of one collective call.
type Plan struct {
	Collective coll.Collective
	Algorithm  string
	Topology   string
	NRanks     int
	Bytes      int64
	DtypeBytes int
	// Counts is the alltoallv byte matrix: Counts[i][j] bytes go from rank
	// i to rank j. Nil for other collectives.
	Counts [][]int64
	// Root is the root rank of bcast (0 for other collectives).
	Root int
	// Routing is the token traffic of dispatch and combine (nil for other
	// collectives).
	Routing *moe.Routing
	// Note says how GenerateFirst chose the algorithm (which one, and why
	// the ones before it were skipped), and what the algorithm noted.
	Note  string
	Ranks []RankProgram
}
