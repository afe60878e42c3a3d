package ucxmp

import (
	"testing"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/ucx"
)

// With a UCX that moves CUDA memory, StageRemote stages the device
// messages of the peers it names and of no others, and never host ones.
func TestStageRemoteStagesOnlyRemoteDeviceMessages(t *testing.T) {
	tr := &Transport{memTypes: ucx.MemoryTypes(1 << uint(ucx.MemCUDA))}
	dev := exec.DeviceRegion(exec.CUDA(0), 0x1000, 64)
	host := exec.HostRegion(make([]byte, 64))
	if tr.useStagingFor(1, dev) {
		t.Fatal("staged without a stager")
	}
	tr.StageRemote(&fakedev.Stager{Arena: fakedev.New(1)}, func(p int) bool { return p == 1 })
	for _, c := range []struct {
		peer int
		b    exec.Region
		want bool
	}{{0, dev, false}, {1, dev, true}, {1, host, false}, {0, host, false}} {
		if got := tr.useStagingFor(c.peer, c.b); got != c.want {
			t.Errorf("peer %d, %v memory: staged %v, want %v", c.peer, c.b.Mem(), got, c.want)
		}
	}
}
