package exec_test

import (
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// FuzzMachine builds arbitrary programs from bytes. New must either reject
// one with an error or run it to completion, with every post's buffer a
// slice of the caller's memory, and never panic. Receives are "delivered"
// by filling their whole posted buffer, which would trip the race
// detector or a bounds check if a slice escaped its buffer.
func FuzzMachine(f *testing.F) {
	f.Add([]byte{1, 2, 0, 8, 0, 4, 1, 3, 0, 0, 8, 4}, uint8(16), uint8(16), uint8(8))
	f.Add([]byte{3, 1, 4, 0, 2, 4, 4, 3, 2, 8, 0, 4, 2, 0, 1, 0, 0, 1}, uint8(8), uint8(32), uint8(0))
	f.Add([]byte{2, 9, 200, 255, 1, 77, 4, 4, 4, 4, 4, 4, 4}, uint8(1), uint8(2), uint8(3))
	f.Fuzz(func(t *testing.T, prog []byte, srcN, dstN, scratchN uint8) {
		p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: int64(srcN), Dst: int64(dstN), Scratch: int64(scratchN)}}
		for len(prog) >= 6 && len(p.Steps) < 64 {
			b := prog[:6]
			prog = prog[6:]
			id := len(p.Steps)
			var deps []int
			if id > 0 && b[5]%2 == 1 {
				deps = append(deps, int(b[5])%id)
			}
			s := sched.Step{
				Op: sched.StepOp(b[0] % 6), SrcBuf: sched.Buf(b[1] % 5), DstBuf: sched.Buf(b[1] / 5 % 5),
				SrcOff: int64(int8(b[2])), DstOff: int64(b[2] / 2), Len: int64(int8(b[3])),
				Peer: int32(b[4]%5) - 1, Tag: int32(b[4] / 5 % 3),
			}
			p.Add(s, deps...)
		}
		bufs := exec.HostBuffers(make([]byte, srcN), make([]byte, dstN), nil)
		m, err := exec.New(p, bufs, exec.Config{Collective: coll.Allreduce, NRanks: 3, Dtype: coll.Int16, Op: coll.Sum})
		if err != nil {
			return
		}
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		for guard := 0; !m.Done(); guard++ {
			if guard > 1000 {
				t.Fatal("machine did not finish")
			}
			r := m.Ready()
			var comps []exec.Completion
			for _, q := range r.Recvs {
				buf := q.Buf.Bytes()
				for i := range buf {
					buf[i] = 0xEE
				}
				comps = append(comps, exec.Completion{Token: q.Token, Len: int64(len(buf))})
			}
			for _, q := range r.Sends {
				comps = append(comps, exec.Completion{Token: q.Token})
			}
			if len(comps) == 0 {
				t.Fatal("machine stuck with nothing in flight")
			}
			for _, c := range comps {
				if err := m.Step(c); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
