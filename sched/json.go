package sched

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/jsondoc"
	"github.com/goring-hpc/goring/moe"
)

// Program JSON (goring.program/v1, docs/contracts.md "Program JSON"). WriteProgram
// streams a plan step by step (one line per step), so a plan of millions of
// steps needs no document-sized intermediate structure; ParseProgram reads
// it back strictly. The one addition to the docs/contracts.md example is "root", which
// is written for bcast only (the verifier needs it).

// MarshalProgram encodes p as a goring.program/v1 document.
func MarshalProgram(p *Plan) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteProgram(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteProgram streams p as a goring.program/v1 document to w.
func WriteProgram(w io.Writer, p *Plan) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 256)
	q := func(s string) []byte {
		b, _ := json.Marshal(s)
		return b
	}
	buf = append(buf, `{"schema":"`+ProgramSchema+`","collective":`...)
	buf = append(buf, q(string(p.Collective))...)
	buf = append(buf, `,"algorithm":`...)
	buf = append(buf, q(p.Algorithm)...)
	buf = append(buf, ",\n \"topology\":"...)
	buf = append(buf, q(p.Topology)...)
	buf = append(buf, `,"nranks":`...)
	buf = strconv.AppendInt(buf, int64(p.NRanks), 10)
	buf = append(buf, `,"bytes":`...)
	buf = strconv.AppendInt(buf, p.Bytes, 10)
	buf = append(buf, `,"dtype_bytes":`...)
	buf = strconv.AppendInt(buf, int64(p.DtypeBytes), 10)
	if p.Collective == coll.Bcast {
		buf = append(buf, `,"root":`...)
		buf = strconv.AppendInt(buf, int64(p.Root), 10)
	}
	buf = append(buf, ",\n \"counts\":"...)
	if p.Counts == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '[')
		for i, row := range p.Counts {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '[')
			for j, c := range row {
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = strconv.AppendInt(buf, c, 10)
			}
			buf = append(buf, ']')
			if len(buf) > 32<<10 {
				if _, err := bw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		buf = append(buf, ']')
	}
	if p.Routing != nil {
		rb, err := json.Marshal(p.Routing)
		if err != nil {
			return err
		}
		buf = append(buf, ",\n \"routing\":"...)
		buf = append(buf, rb...)
	}
	buf = append(buf, ",\n \"buffers\":"...)
	sizes := func(b []byte, z Sizes) []byte {
		b = append(b, `{"src":`...)
		b = strconv.AppendInt(b, z.Src, 10)
		b = append(b, `,"dst":`...)
		b = strconv.AppendInt(b, z.Dst, 10)
		b = append(b, `,"scratch":`...)
		b = strconv.AppendInt(b, z.Scratch, 10)
		return append(b, '}')
	}
	uniform := true
	for i := range p.Ranks {
		if p.Ranks[i].Sizes != p.Ranks[0].Sizes {
			uniform = false
			break
		}
	}
	switch {
	case len(p.Ranks) == 0:
		buf = sizes(buf, Sizes{})
	case uniform:
		buf = sizes(buf, p.Ranks[0].Sizes)
	default:
		buf = append(buf, '[')
		for i := range p.Ranks {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = sizes(buf, p.Ranks[i].Sizes)
		}
		buf = append(buf, ']')
	}
	buf = append(buf, ",\n \"ranks\":["...)
	for r := range p.Ranks {
		rp := &p.Ranks[r]
		if r > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, "\n {\"rank\":"...)
		buf = strconv.AppendInt(buf, int64(rp.Rank), 10)
		buf = append(buf, `,"node":`...)
		buf = strconv.AppendInt(buf, int64(rp.Node), 10)
		buf = append(buf, `,"local":`...)
		buf = strconv.AppendInt(buf, int64(rp.Local), 10)
		buf = append(buf, `,"steps":[`...)
		for id := range rp.Steps {
			if id > 0 {
				buf = append(buf, ',')
			}
			buf = appendStep(buf, rp, id)
			if len(buf) > 32<<10 {
				if _, err := bw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		buf = append(buf, "]}"...)
	}
	buf = append(buf, "\n]}\n"...)
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

func appendRef(b []byte, key string, buf Buf, off int64) []byte {
	b = append(b, `,"`+key+`":{"buf":"`...)
	b = append(b, buf.String()...)
	b = append(b, `","off":`...)
	b = strconv.AppendInt(b, off, 10)
	return append(b, '}')
}

func appendStep(b []byte, rp *RankProgram, id int) []byte {
	s := &rp.Steps[id]
	b = append(b, "\n  {\"id\":"...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"op":"`...)
	b = append(b, s.Op.String()...)
	b = append(b, '"')
	switch s.Op {
	case OpSend, OpRecv:
		b = append(b, `,"peer":`...)
		b = strconv.AppendInt(b, int64(s.Peer), 10)
		b = append(b, `,"tag":`...)
		b = strconv.AppendInt(b, int64(s.Tag), 10)
		ref := s.Src()
		if s.Op == OpRecv {
			ref = s.Dst()
		}
		b = append(b, `,"buf":"`...)
		b = append(b, ref.Buf.String()...)
		b = append(b, `","off":`...)
		b = strconv.AppendInt(b, ref.Off, 10)
	default:
		b = appendRef(b, "src", s.SrcBuf, s.SrcOff)
		b = appendRef(b, "dst", s.DstBuf, s.DstOff)
	}
	b = append(b, `,"len":`...)
	b = strconv.AppendInt(b, s.Len, 10)
	if s.Op == OpSend && s.Path.Kind != PathAny {
		b = append(b, `,"path":"`...)
		b = append(b, s.Path.String()...)
		b = append(b, '"')
	}
	b = append(b, `,"deps":[`...)
	for i, d := range rp.Deps(id) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return append(b, "]}"...)
}

type jsonSizes struct {
	Src     *int64 `json:"src"`
	Dst     *int64 `json:"dst"`
	Scratch *int64 `json:"scratch"`
}

type jsonRef struct {
	Buf *string `json:"buf"`
	Off *int64  `json:"off"`
}

type jsonStep struct {
	ID   *int64   `json:"id"`
	Op   *string  `json:"op"`
	Peer *int64   `json:"peer"`
	Tag  *int64   `json:"tag"`
	Buf  *string  `json:"buf"`
	Off  *int64   `json:"off"`
	Src  *jsonRef `json:"src"`
	Dst  *jsonRef `json:"dst"`
	Len  *int64   `json:"len"`
	Path *string  `json:"path"`
	Deps *[]int64 `json:"deps"`
}

type jsonRank struct {
	Rank  *int64     `json:"rank"`
	Node  *int64     `json:"node"`
	Local *int64     `json:"local"`
	Steps []jsonStep `json:"steps"`
}

type jsonProgram struct {
	Schema     string          `json:"schema"`
	Collective string          `json:"collective"`
	Algorithm  string          `json:"algorithm"`
	Topology   string          `json:"topology"`
	NRanks     *int64          `json:"nranks"`
	Bytes      *int64          `json:"bytes"`
	DtypeBytes *int64          `json:"dtype_bytes"`
	Root       *int64          `json:"root"`
	Counts     [][]int64       `json:"counts"`
	Routing    *moe.Routing    `json:"routing"`
	Buffers    json.RawMessage `json:"buffers"`
	Ranks      []jsonRank      `json:"ranks"`
}

// maxParseRanks bounds nranks so a hostile document cannot make the parser
// allocate without bound before it reads the ranks.
const maxParseRanks = 1 << 20

// ParseProgram decodes a goring.program/v1 document strictly: unknown
// fields, missing fields, unknown ops, buffers or paths, ids not 0..n-1 in
// order, deps that are not earlier steps, negative offsets or lengths and
// peers out of range are errors naming the rank and step. It does not
// check that the plan is correct; Verify does.
func ParseProgram(data []byte) (*Plan, error) {
	var jp jsonProgram
	if err := jsondoc.Decode(data, &jp, true); err != nil {
		return nil, fmt.Errorf("program JSON: %w", err)
	}
	perr := func(format string, args ...any) error {
		return fmt.Errorf("program JSON: "+format, args...)
	}
	if jp.Schema != ProgramSchema {
		return nil, perr("schema %q, want %q", jp.Schema, ProgramSchema)
	}
	c, err := coll.ParseCollective(jp.Collective)
	if err != nil {
		return nil, perr("%v", err)
	}
	if jp.Algorithm == "" {
		return nil, perr("missing algorithm")
	}
	if jp.NRanks == nil || jp.Bytes == nil || jp.DtypeBytes == nil {
		return nil, perr("nranks, bytes and dtype_bytes are required")
	}
	n := *jp.NRanks
	if n < 1 || n > maxParseRanks {
		return nil, perr("nranks %d: want 1..%d", n, maxParseRanks)
	}
	if int64(len(jp.Ranks)) != n {
		return nil, perr("nranks is %d but ranks has %d programs", n, len(jp.Ranks))
	}
	if *jp.Bytes < 0 {
		return nil, perr("negative bytes %d", *jp.Bytes)
	}
	switch *jp.DtypeBytes {
	case 1, 2, 4, 8:
	default:
		return nil, perr("dtype_bytes %d: want 1, 2, 4 or 8", *jp.DtypeBytes)
	}
	p := &Plan{Collective: c, Algorithm: jp.Algorithm, Topology: jp.Topology, NRanks: int(n),
		Bytes: *jp.Bytes, DtypeBytes: int(*jp.DtypeBytes), Counts: jp.Counts}
	if jp.Routing != nil {
		if !c.Routed() {
			return nil, perr("routing is only for dispatch and combine")
		}
		if err := jp.Routing.Validate(int(n)); err != nil {
			return nil, perr("%v", err)
		}
		p.Routing = jp.Routing
	} else if c.Routed() {
		return nil, perr("%s needs a routing", c)
	}
	if jp.Root != nil {
		if c != coll.Bcast {
			return nil, perr("root is only for bcast")
		}
		if *jp.Root < 0 || *jp.Root >= n {
			return nil, perr("root %d out of range 0..%d", *jp.Root, n-1)
		}
		p.Root = int(*jp.Root)
	}
	if jp.Counts != nil {
		if err := coll.CheckMatrix(jp.Counts, int(n), 0); err != nil {
			return nil, perr("counts: %v", err)
		}
	}
	sizes, err := parseBuffers(jp.Buffers, int(n))
	if err != nil {
		return nil, err
	}
	p.Ranks = make([]RankProgram, n)
	for r := range jp.Ranks {
		jr := &jp.Ranks[r]
		if jr.Rank == nil || jr.Node == nil || jr.Local == nil || jr.Steps == nil {
			return nil, perr("ranks[%d]: rank, node, local and steps are required", r)
		}
		if *jr.Rank != int64(r) {
			return nil, perr("ranks[%d] has rank %d; programs must be in rank order", r, *jr.Rank)
		}
		if *jr.Node < 0 || *jr.Local < 0 || *jr.Node > maxParseRanks || *jr.Local > maxParseRanks {
			return nil, perr("ranks[%d]: node %d, local %d out of range", r, *jr.Node, *jr.Local)
		}
		rp := &p.Ranks[r]
		*rp = RankProgram{Rank: r, Node: int(*jr.Node), Local: int(*jr.Local), Sizes: sizes[r]}
		rp.Steps = make([]Step, 0, len(jr.Steps))
		for id := range jr.Steps {
			if err := parseStep(rp, &jr.Steps[id], int(n)); err != nil {
				return nil, perr("ranks[%d].steps[%d]: %v", r, id, err)
			}
		}
	}
	return p, nil
}

func parseBuffers(raw json.RawMessage, n int) ([]Sizes, error) {
	one := func(d []byte, what string) (Sizes, error) {
		var js jsonSizes
		dec := json.NewDecoder(bytes.NewReader(d))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&js); err != nil {
			return Sizes{}, fmt.Errorf("program JSON: %s: %w", what, err)
		}
		if js.Src == nil || js.Dst == nil || js.Scratch == nil {
			return Sizes{}, fmt.Errorf("program JSON: %s: src, dst and scratch are required", what)
		}
		z := Sizes{Src: *js.Src, Dst: *js.Dst, Scratch: *js.Scratch}
		if z.Src < 0 || z.Dst < 0 || z.Scratch < 0 {
			return Sizes{}, fmt.Errorf("program JSON: %s: negative size", what)
		}
		return z, nil
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil, fmt.Errorf("program JSON: buffers are required")
	}
	out := make([]Sizes, n)
	if t[0] == '{' {
		z, err := one(t, "buffers")
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = z
		}
		return out, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(t, &list); err != nil {
		return nil, fmt.Errorf("program JSON: buffers: want an object or a list of objects: %w", err)
	}
	if len(list) != n {
		return nil, fmt.Errorf("program JSON: buffers has %d entries, want %d (one per rank)", len(list), n)
	}
	for i, d := range list {
		z, err := one(d, fmt.Sprintf("buffers[%d]", i))
		if err != nil {
			return nil, err
		}
		out[i] = z
	}
	return out, nil
}

// ParseBuf maps "src", "dst", "scratch" to a Buf.
func ParseBuf(s string) (Buf, error) {
	for b := BufSrc; b <= BufScratch; b++ {
		if b.String() == s {
			return b, nil
		}
	}
	return 0, fmt.Errorf("unknown buffer %q (want src, dst or scratch)", s)
}

// ParsePath maps a path hint ("", "direct", "host", "gpu:N", "rail:N"; also
// "railN" as in the docs/contracts.md example) to a Path.
func ParsePath(s string) (Path, error) {
	switch s {
	case "":
		return Path{}, nil
	case "direct":
		return Path{Kind: PathDirect}, nil
	case "host":
		return Path{Kind: PathHost}, nil
	}
	var kind PathKind
	var num string
	switch {
	case strings.HasPrefix(s, "gpu:"):
		kind, num = PathGPU, s[4:]
	case strings.HasPrefix(s, "rail:"):
		kind, num = PathRail, s[5:]
	case strings.HasPrefix(s, "rail"):
		kind, num = PathRail, s[4:]
	default:
		return Path{}, fmt.Errorf("unknown path %q (want direct, host, gpu:N or rail:N)", s)
	}
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || i > 255 || strconv.Itoa(i) != num {
		return Path{}, fmt.Errorf("path %q: index must be 0..255", s)
	}
	return Path{Kind: kind, Index: uint8(i)}, nil
}

func parseOp(s string) (StepOp, error) {
	for o := OpSend; o <= OpReduce; o++ {
		if o.String() == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown op %q (want send, recv, copy or reduce)", s)
}

func parseStep(rp *RankProgram, js *jsonStep, n int) error {
	id := len(rp.Steps)
	if js.ID == nil || *js.ID != int64(id) {
		if js.ID == nil {
			return fmt.Errorf("missing id")
		}
		return fmt.Errorf("id %d, want %d (ids are 0..n-1 in order)", *js.ID, id)
	}
	if js.Op == nil {
		return fmt.Errorf("missing op")
	}
	op, err := parseOp(*js.Op)
	if err != nil {
		return err
	}
	if js.Len == nil {
		return fmt.Errorf("missing len")
	}
	if *js.Len < 0 {
		return fmt.Errorf("negative len %d", *js.Len)
	}
	if js.Deps == nil {
		return fmt.Errorf("missing deps")
	}
	s := Step{Op: op, Len: *js.Len}
	switch op {
	case OpSend, OpRecv:
		if js.Src != nil || js.Dst != nil {
			return fmt.Errorf("%s takes buf and off, not src/dst", op)
		}
		if js.Peer == nil || js.Tag == nil || js.Buf == nil || js.Off == nil {
			return fmt.Errorf("%s needs peer, tag, buf and off", op)
		}
		if *js.Peer < 0 || *js.Peer >= int64(n) {
			return fmt.Errorf("peer %d out of range 0..%d", *js.Peer, n-1)
		}
		if *js.Peer == int64(rp.Rank) {
			return fmt.Errorf("peer %d is the rank itself", *js.Peer)
		}
		if *js.Tag < -1<<31 || *js.Tag >= 1<<31 {
			return fmt.Errorf("tag %d does not fit 32 bits", *js.Tag)
		}
		b, err := ParseBuf(*js.Buf)
		if err != nil {
			return err
		}
		if *js.Off < 0 {
			return fmt.Errorf("negative off %d", *js.Off)
		}
		s.Peer, s.Tag = int32(*js.Peer), int32(*js.Tag)
		if op == OpSend {
			s.SrcBuf, s.SrcOff = b, *js.Off
			if js.Path != nil {
				if s.Path, err = ParsePath(*js.Path); err != nil {
					return err
				}
			}
		} else {
			if js.Path != nil {
				return fmt.Errorf("path is a hint of send steps only")
			}
			s.DstBuf, s.DstOff = b, *js.Off
		}
	default:
		if js.Peer != nil || js.Tag != nil || js.Buf != nil || js.Off != nil || js.Path != nil {
			return fmt.Errorf("%s takes src, dst and len only", op)
		}
		if js.Src == nil || js.Dst == nil {
			return fmt.Errorf("%s needs src and dst", op)
		}
		for _, side := range []struct {
			name string
			ref  *jsonRef
			buf  *Buf
			off  *int64
		}{{"src", js.Src, &s.SrcBuf, &s.SrcOff}, {"dst", js.Dst, &s.DstBuf, &s.DstOff}} {
			if side.ref.Buf == nil || side.ref.Off == nil {
				return fmt.Errorf("%s needs buf and off", side.name)
			}
			b, err := ParseBuf(*side.ref.Buf)
			if err != nil {
				return fmt.Errorf("%s: %v", side.name, err)
			}
			if *side.ref.Off < 0 {
				return fmt.Errorf("%s: negative off %d", side.name, *side.ref.Off)
			}
			*side.buf, *side.off = b, *side.ref.Off
		}
	}
	deps := *js.Deps
	if len(deps) > 0xffff {
		return fmt.Errorf("%d deps: at most 65535", len(deps))
	}
	ds := make([]int32, len(deps))
	for i, d := range deps {
		if d < 0 || d >= int64(id) {
			return fmt.Errorf("deps: step %d is not an earlier step of this rank", d)
		}
		ds[i] = int32(d)
	}
	rp.addParsed(s, ds)
	return nil
}
