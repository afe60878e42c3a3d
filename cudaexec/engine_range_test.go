package cudaexec

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
	"github.com/stretchr/testify/require"
)

// The offset of a push or a mapping comes from the peer's clear-to-send:
// one so large that offset+length wraps past the int64 range must be
// refused like any other range off the allocation, not let through to a
// copy at a wild address. No GPU needed: the mapping is in the cache
// already, so the range check is the only thing between the key and the
// region handed back.
func TestEngineRefusesARangeThatWrapsPastTheAllocation(t *testing.T) {
	e := NewEngine()
	e.devs[0] = &cuda.Device{}
	const peer, id, size = 1, 7, 4096
	e.maps[mapKey{peer: peer, dev: 0, id: id}] = &mapping{buf: &cuda.Buffer{}, base: 1 << 30, size: size}
	key := make([]byte, keyLen)
	binary.LittleEndian.PutUint64(key[64:], id)
	binary.LittleEndian.PutUint64(key[72:], 1<<30)
	binary.LittleEndian.PutUint64(key[80:], size)

	_, err := e.Map(peer, key, size-16, 16, exec.CUDA(0))
	require.NoError(t, err, "the allocation's last 16 bytes")
	e.Release(peer, key)
	_, err = e.Map(peer, key, size-16, 17, exec.CUDA(0))
	require.Error(t, err, "one byte past the end")
	_, err = e.Map(peer, key, math.MaxInt64-8, 16, exec.CUDA(0))
	require.ErrorContains(t, err, "run off", "an offset whose end wraps past the int64 range")
}
