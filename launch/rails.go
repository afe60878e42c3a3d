package launch

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/ucx"
)

// RailTLS is the UCX transport list of a rail's worker: TCP only, so that
// a message to another node cannot take shared memory (every "node" of the
// testbed is a process on the same kernel, where UCX's sm would reach) and
// leaves through the rail's device.
const RailTLS = "tcp"

// RailDevice is the name of rail r's network device in a node namespace of
// the testbed (tests/netns/testbed.sh names node k's veth on rail r so).
func RailDevice(r int) string { return fmt.Sprintf("rail%d", r) }

// OpenRailWorker opens a UCX context that sees only network device dev
// (UCX's NET_DEVICES) with transports tls, and a worker on it: one rail of
// a rank. The worker owns its context (Close releases both). Anything that
// wants one UCX worker per rail — the rails of goring bench --netns, a lane
// bound to rail w — opens it here.
//
// Large messages use the receiver-pulled rendezvous (RNDV_SCHEME get_zcopy).
// UCX's TCP carries both directions between two workers on one connection,
// so with the default (sender-pushed) scheme the receiver's control
// messages queue behind the bulk data it sends the other way, and a rail
// carrying data both ways, as every ring's does, ran at half its rate
// (docs/netns.md: 4 MiB each way in 66 ms at 1 Gbit/s, 33 ms pulled).
func OpenRailWorker(dev, tls string) (*RankWorker, error) {
	uctx, err := ucx.Init(ucx.Options{Config: map[string]string{"NET_DEVICES": dev, "TLS": tls, "RNDV_SCHEME": "get_zcopy"}})
	if err != nil {
		return nil, fmt.Errorf("rail device %s: %w", dev, err)
	}
	rw, err := OpenRankWorker(uctx)
	if err != nil {
		_ = uctx.Close()
		return nil, fmt.Errorf("rail device %s: %w", dev, err)
	}
	rw.ownCtx = true
	return rw, nil
}

// PackAddresses joins several worker addresses into one coordinator
// payload (a rank with a worker per rail presents them all in its hello):
// each is a 4-byte big-endian length and the bytes.
func PackAddresses(addrs [][]byte) []byte {
	var out []byte
	for _, a := range addrs {
		out = binary.BigEndian.AppendUint32(out, uint32(len(a)))
		out = append(out, a...)
	}
	return out
}

// UnpackAddresses splits a payload of PackAddresses; it refuses one that is
// cut short or holds another count than want.
func UnpackAddresses(p []byte, want int) ([][]byte, error) {
	out, err := unpackAll(p)
	if err != nil {
		return nil, err
	}
	if len(out) != want {
		return nil, fmt.Errorf("packed addresses: %d, want %d", len(out), want)
	}
	return out, nil
}

// unpackAll splits a payload of PackAddresses, however many it holds.
func unpackAll(p []byte) ([][]byte, error) {
	var out [][]byte
	for len(p) > 0 {
		if len(p) < 4 {
			return nil, errors.New("packed addresses: cut short")
		}
		n := binary.BigEndian.Uint32(p)
		p = p[4:]
		if uint64(n) > uint64(len(p)) {
			return nil, errors.New("packed addresses: cut short")
		}
		out = append(out, p[:n:n])
		p = p[n:]
	}
	return out, nil
}
