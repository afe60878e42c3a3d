package team

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/goring-hpc/goring/tune"
	"github.com/goring-hpc/goring/ucx"
)

// Context is a goring context: the UCX context its teams' workers come
// from, and the options.
type Context struct {
	opts      options
	uctx      *ucx.Context
	ucxConfig map[string]string   // the context's UCX settings, which every lane's context takes too
	cal       *machineCalibration // the calibration option's file; nil: none
	claims    *tune.ClaimsFile    // the claims option's file; nil: none
	asleep    func()              // releases the runtime keeper (awake.go)
	rv        *rendezvous         // the lazy teams' card exchange (rendezvous.go); nil: none
	shared    *sharedWorker       // the context path's worker (shared.go); nil: none
	algKey    string              // the algorithm options as the score cache's key (scores.go)
	workers   workerPool          // workers of teams that ended cleanly (workerpool.go)
	cpath     CPathTable          // where teams list their C side (cpath.go); nil: the C path is off
	// devicePoll is how often the executors of the teams' GPUs look for
	// finished copies and reductions (cudaexec.GPU.PollEvery; 0: the
	// default): SetDevicePoll.
	devicePoll time.Duration
}

// NewContext opens a goring context with the options of optStr
// (options.go); cpath lists its teams' C sides (nil: no C path).
func NewContext(optStr string, cpath CPathTable) (*Context, error) {
	opts, err := parseOptions(optStr)
	if err != nil {
		return nil, invalidErr{err}
	}
	cal, err := loadMachineCalibration(opts.calibration)
	if err != nil {
		return nil, invalidErr{err}
	}
	claims, err := loadClaims(opts.claims)
	if err != nil {
		return nil, invalidErr{err}
	}
	if err := ucx.Load(); err != nil {
		return nil, resourceErr{err}
	}
	cfg := map[string]string{}
	if opts.tls != "" {
		cfg["TLS"] = opts.tls
	}
	if n, ok := stripeLanes(os.Getenv("UCX_NET_DEVICES"), os.Getenv("UCX_MAX_EAGER_LANES")); ok {
		cfg["MAX_EAGER_LANES"] = n // every rail of the node (stripe.go)
	}
	uctx, err := ucx.Init(ucx.Options{Config: cfg})
	if err != nil {
		return nil, resourceErr{err}
	}
	c := &Context{opts: opts, uctx: uctx, ucxConfig: cfg, cal: cal, claims: claims, algKey: fmt.Sprint(opts.algs, opts.chosen), cpath: cpath}
	if c.shared, err = openShared(c); err != nil {
		_ = uctx.Close()
		return nil, resourceErr{err}
	}
	if c.rv, err = openRendezvous(c); err != nil {
		_ = c.shared.close()
		_ = uctx.Close()
		return nil, resourceErr{err}
	}
	c.asleep = keepAwake(opts.keepAwake)
	return c, nil
}

// SetDevicePoll sets how often the executors of the GPUs its teams open
// from now on look for finished copies and reductions while any run
// (cudaexec.GPU.PollEvery; 0: exec.PollEvery): goring bench's
// --device-poll. UCC's contexts keep the default.
func (c *Context) SetDevicePoll(d time.Duration) { c.devicePoll = d }

// Close releases the context's workers and UCX context.
func (c *Context) Close() error {
	c.asleep()
	errs := []error{c.workers.drain()}
	if c.rv != nil {
		errs = append(errs, c.rv.close())
	}
	errs = append(errs, c.shared.close())
	if err := errors.Join(append(errs, c.uctx.Close())...); err != nil {
		return resourceErr{err}
	}
	return nil
}

// Card is the context's card (rendezvous.go), what UCC publishes as
// goring's context address.
func (c *Context) Card() []byte { return c.rv.card }

// A card is what a rank publishes to its team: "GRC5", the host name
// (uint16 length + bytes), the process id (uint32) and its start time
// (uint64, launch.ProcStart: with the pid it names the process for good),
// the UCX worker address (uint32 length + bytes), the PCI address of
// the one GPU the process sees (uint16 length + bytes; empty when it sees
// none or several), the crossmem setting (mode and threads, a byte
// each), and the context's shared worker address (uint32 length + bytes;
// empty on a team card, or where the context has none: shared.go),
// little-endian; then, on the card of a rank of W > 1 lanes only, W (a
// byte). A one-lane card ends where the cards of before lanes ended, and
// the zeros that pad a slot read as one lane: a rank of one lane learns
// that a peer runs several from the count, where the address alone (a
// bare one for one lane) could not tell it.
const cardMagic = "GRC5"

type card struct {
	host  string
	pid   int
	start uint64
	addr  []byte
	gpu   string
	// cross is the rank's crossmem setting: its mode (crossmemOff,
	// crossmemAuto or crossmemForced) and its threads, so that every rank
	// decides alike which calls run by cross-memory reads (crossmem.go).
	cross crossCard
	// shared is the address of the context's shared worker (shared.go).
	shared []byte
	// lanes is the lanes the rank runs (lanes.go); 0 and 1: one.
	lanes int
}

type crossCard struct{ mode, threads uint8 }

func encodeCard(c card) []byte {
	b := make([]byte, 0, 4+2+len(c.host)+12+4+len(c.addr)+2+len(c.gpu)+2+4+len(c.shared))
	b = append(b, cardMagic...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(c.host)))
	b = append(b, c.host...)
	b = binary.LittleEndian.AppendUint32(b, uint32(c.pid))
	b = binary.LittleEndian.AppendUint64(b, c.start)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.addr)))
	b = append(b, c.addr...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(c.gpu)))
	b = append(b, c.gpu...)
	b = append(b, c.cross.mode, c.cross.threads)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.shared)))
	b = append(b, c.shared...)
	if c.lanes > 1 {
		b = append(b, byte(c.lanes)) // coll.MaxLanes fits
	}
	return b
}

// decodeCard reads the card at the start of slot (padding after it is
// ignored), trusting no length beyond the slot.
func decodeCard(slot []byte) (card, error) {
	if len(slot) < 6 || string(slot[:4]) != cardMagic {
		return card{}, errors.New("not a goring card of this version (wrong magic or too short)")
	}
	hl := int(binary.LittleEndian.Uint16(slot[4:]))
	rest := slot[6:]
	if hl > len(rest) {
		return card{}, fmt.Errorf("host name of %d bytes overruns the %d-byte slot", hl, len(slot))
	}
	c := card{host: string(rest[:hl])}
	rest = rest[hl:]
	if len(rest) < 16 {
		return card{}, errors.New("card ends before the process id and address length")
	}
	c.pid = int(binary.LittleEndian.Uint32(rest))
	c.start = binary.LittleEndian.Uint64(rest[4:])
	al := int64(binary.LittleEndian.Uint32(rest[12:]))
	rest = rest[16:]
	if al == 0 || al > int64(len(rest)) {
		return card{}, fmt.Errorf("address of %d bytes does not fit the %d bytes left in the slot", al, len(rest))
	}
	c.addr = append([]byte(nil), rest[:al]...)
	rest = rest[al:]
	if len(rest) < 2 {
		return card{}, errors.New("card ends before the GPU's address")
	}
	gl := int(binary.LittleEndian.Uint16(rest))
	if gl > len(rest)-2 {
		return card{}, fmt.Errorf("GPU address of %d bytes overruns the slot", gl)
	}
	c.gpu = string(rest[2 : 2+gl])
	rest = rest[2+gl:]
	if len(rest) < 2 {
		return card{}, errors.New("card ends before the crossmem setting")
	}
	c.cross = crossCard{mode: rest[0], threads: rest[1]}
	rest = rest[2:]
	if len(rest) < 4 {
		return card{}, errors.New("card ends before the shared worker's address")
	}
	sl := int64(binary.LittleEndian.Uint32(rest))
	if sl > int64(len(rest)-4) {
		return card{}, fmt.Errorf("shared worker address of %d bytes overruns the slot", sl)
	}
	if sl > 0 {
		c.shared = append([]byte(nil), rest[4:4+sl]...)
	}
	if rest = rest[4+sl:]; len(rest) > 0 && rest[0] > 1 {
		c.lanes = int(rest[0])
	}
	return c, nil
}
