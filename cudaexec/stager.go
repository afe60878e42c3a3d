package cudaexec

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
)

// DefaultMaxPinned bounds the pinned host memory a Stager holds.
const DefaultMaxPinned = 256 << 20

// Stager is the host-staging fallback of package ucx_mp (ucxmp.Stager) on
// CUDA: device bytes are copied to a host buffer and sent through UCX, or
// received into one and copied to the device. Buffers are pinned (the
// copies run at the DMA engines' rate), kept for reuse, at most MaxPinned
// bytes in all; beyond that, a request gets ordinary host memory, slower
// to copy but never refused. Every copy runs on a stream of the stager's
// own and waits for that stream alone, never for the device's other work:
// a staged transfer may stand in for a push while the caller's stream is
// held until the call completes (exec.ErrMappingBusy). For the same
// reason no pinned memory is allocated while SetMayWait says a wait could
// be for ever (cuMemHostAlloc may wait for the device): Prepare makes the
// stream beforehand. Use from one goroutine.
type Stager struct {
	dev    *cuda.Device
	stream *cuda.Stream // made by Prepare, else on the first copy
	// mayWait says whether the device may be waited for now (nil:
	// always); see SetMayWait.
	mayWait func() bool
	// MaxPinned bounds the pinned memory held (DefaultMaxPinned).
	MaxPinned int64
	held      int64
	idle      []*cuda.HostBuffer
	busy      map[*byte]*cuda.HostBuffer
}

// NewStager opens GPU ordinal for staging copies.
func NewStager(ordinal int) (*Stager, error) {
	d, err := cuda.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return &Stager{dev: d, MaxPinned: DefaultMaxPinned, busy: map[*byte]*cuda.HostBuffer{}}, nil
}

// SetMayWait tells the stager when a driver call that may wait for the
// device's queued work cannot wait for ever: f reports it (nil: always).
// While it says no, Buffer allocates no pinned memory (Go memory
// instead).
func (s *Stager) SetMayWait(f func() bool) { s.mayWait = f }

// Prepare makes the stager's stream now, while nothing holds the device,
// so that a staged transfer never makes one (cuStreamCreate waited for
// ever behind a held stream; docs/gpu.md "The caller's stream").
func (s *Stager) Prepare() error {
	_, err := s.ownStream()
	return err
}

// Buffer implements ucxmp.Stager: the smallest idle pinned buffer that
// fits, a new one within MaxPinned where the device may be waited for,
// or Go memory.
func (s *Stager) Buffer(n int64) ([]byte, error) {
	if n <= 0 {
		return make([]byte, 0, 1), nil
	}
	best := -1
	for i, h := range s.idle {
		if int64(h.Len()) >= n && (best < 0 || h.Len() < s.idle[best].Len()) {
			best = i
		}
	}
	var h *cuda.HostBuffer
	switch {
	case best >= 0:
		h = s.idle[best]
		s.idle = append(s.idle[:best], s.idle[best+1:]...)
	case s.held+n <= s.MaxPinned && (s.mayWait == nil || s.mayWait()):
		var err error
		if h, err = s.dev.AllocHost(int(n)); err != nil {
			return nil, err
		}
		s.held += n
	default:
		return make([]byte, n), nil
	}
	b := h.Bytes()[:n]
	s.busy[unsafe.SliceData(b)] = h
	return b, nil
}

// Release implements ucxmp.Stager.
func (s *Stager) Release(b []byte) {
	if h := s.busy[unsafe.SliceData(b)]; h != nil {
		delete(s.busy, unsafe.SliceData(b))
		s.idle = append(s.idle, h)
	}
}

// ToHost implements ucxmp.Stager. Pinned or not, the copy runs on the
// stager's stream (the driver copies pinned memory by DMA and pageable
// memory through its own staging; cuda.CopyToHostOn).
func (s *Stager) ToHost(b []byte, src exec.Region) error {
	if src.Mem().Kind != exec.MemCUDA || int64(len(b)) != src.Len() {
		return fmt.Errorf("cudaexec: staging %v into %d host bytes", src, len(b))
	}
	st, err := s.ownStream()
	if err != nil {
		return err
	}
	return cuda.CopyToHostOn(st, b, cuda.DevicePtr(src.Addr()))
}

// ToDevice implements ucxmp.Stager, on the stager's stream as ToHost.
func (s *Stager) ToDevice(dst exec.Region, b []byte) error {
	if dst.Mem().Kind != exec.MemCUDA || int64(len(b)) != dst.Len() {
		return fmt.Errorf("cudaexec: staging %d host bytes into %v", len(b), dst)
	}
	st, err := s.ownStream()
	if err != nil {
		return err
	}
	return cuda.CopyFromHostOn(st, cuda.DevicePtr(dst.Addr()), b)
}

// ownStream is the stager's stream, made on first use.
func (s *Stager) ownStream() (*cuda.Stream, error) {
	if s.stream == nil {
		st, err := s.dev.NewStream()
		if err != nil {
			return nil, err
		}
		s.stream = st
	}
	return s.stream, nil
}

// Close frees the pinned buffers (none may be in use).
func (s *Stager) Close() error {
	var errs []error
	for _, h := range s.idle {
		errs = append(errs, h.Free())
	}
	for _, h := range s.busy {
		errs = append(errs, h.Free())
	}
	s.idle, s.busy, s.held = nil, map[*byte]*cuda.HostBuffer{}, 0
	if s.stream != nil {
		errs = append(errs, s.stream.Destroy())
		s.stream = nil
	}
	return errors.Join(append(errs, s.dev.Close())...)
}
