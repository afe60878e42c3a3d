package crossread

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
)

// A host allgather whose call names a dtype of several bytes reads each
// peer's block in parts cut at byte boundaries (an allgather moves bytes):
// the reader must copy them, whatever the dtype. Two ranks of this
// process, each reading the other through process_vm_readv of itself.
func TestCrossReaderAllgatherOfWideElements(t *testing.T) {
	const p, threads = 2, 3
	const B = 4 * (direct.MinPart + 1) // 3 parts of a byte count that 4 does not divide
	net := memtransport.New(p, memtransport.Options{Seed: 1})
	src, dst := make([][]byte, p), make([][]byte, p)
	var want []byte
	for r := range p {
		src[r] = make([]byte, B)
		for i := range src[r] {
			src[r][i] = byte(i*7 + r*13)
		}
		dst[r] = make([]byte, p*B)
		want = append(want, src[r]...)
	}
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var call direct.Call
			cfg := direct.Config{Collective: coll.Allgather, Rank: r, Size: p, Src: exec.HostRegion(src[r]), Dst: exec.HostRegion(dst[r]),
				Dtype: coll.Float32, Transport: net.Endpoint(r), Host: direct.NewHost(&CrossReader{}, threads, 0),
				Deadline: time.Now().Add(20 * time.Second)}
			if errs[r] = call.Begin(cfg); errs[r] != nil {
				return
			}
			errs[r] = exec.Drive(context.Background(), &call, time.Now().Add(20*time.Second))
		}()
	}
	wg.Wait()
	for r := range p {
		if errorsIsPerm(errs[r]) {
			t.Skipf("this kernel refuses cross-memory reads here: %v", errs[r])
		}
		require.NoError(t, errs[r], "rank %d", r)
		require.Equal(t, want, dst[r], "rank %d's result", r)
	}
}
