package tune

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
)

// BenchmarkHostRates measures the figures the host regime takes for a
// process's copy and float32 sum (hostCopyGBps, hostReduceGBps) and for
// all processes' copies together (hostBusGBps): 64 MiB (beyond the
// caches), the executor's own kernels, reported as MB/s of dst.
//
//	go test ./tune -run - -bench HostRates -benchtime 100x
func BenchmarkHostRates(b *testing.B) {
	const n = 64 << 20
	dst, src := make([]byte, n), make([]byte, n)
	for i := range src { // touched: untouched pages all map the one zero page
		src[i], dst[i] = byte(i), byte(i>>8)
	}
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			copy(dst, src)
		}
	})
	// Every core copying at once, one buffer pair each: the memory the
	// processes share (hostBusGBps); MB/s is their sum.
	b.Run("copy-every-core", func(b *testing.B) {
		pairs := make([][2][]byte, runtime.GOMAXPROCS(0))
		for k := range pairs {
			d, s := make([]byte, n), make([]byte, n)
			for i := range s {
				s[i], d[i] = byte(i), byte(i>>8)
			}
			pairs[k] = [2][]byte{d, s}
		}
		var next atomic.Int32
		b.SetBytes(n)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			p := pairs[int(next.Add(1)-1)%len(pairs)]
			d, s := p[0], p[1]
			for pb.Next() {
				copy(d, s)
			}
		})
	})
	b.Run("float32-sum", func(b *testing.B) {
		f, err := reduce.Kernel(coll.Float32, coll.Sum)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(n)
		for b.Loop() {
			f(dst, src)
		}
	})
}

// BenchmarkClaims is what a team's creation pays for the model's scores
// (Claims over every scored collective and size), per regime and team
// size: the reason for MaxRanks.
//
//	go test ./tune -run - -bench Claims -benchtime 1x
func BenchmarkClaims(b *testing.B) {
	for _, procs := range []int{4, 8, 16, 32} {
		for _, gpus := range []int{0, procs} {
			s := Shape{Size: procs, OneHost: true, GPUs: gpus}
			b.Run(fmt.Sprintf("ranks=%d/gpus=%d", procs, gpus), func(b *testing.B) {
				for b.Loop() {
					// Regimes refuses more than MaxRanks; the benchmark
					// times what a larger bound would cost.
					for mem, r := range s.regimesUnbounded() {
						for _, c := range ScoredColls {
							if _, err := Compare(r, c, 4, Sizes(), teamChooser(mem == "host", choose.Shape{Size: procs, Push: gpus > 0})); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
			})
		}
	}
}

// regimesUnbounded is Regimes without the bound on the team's size.
func (s Shape) regimesUnbounded() map[string]Regime {
	out := map[string]Regime{}
	if r, err := Host(s.Size, s.CMax); err == nil && s.GPUs == 0 {
		out["host"] = r
	}
	if r, err := GPUs(s.Size); err == nil && s.GPUs >= s.Size {
		out["cuda"] = r
	}
	return out
}
