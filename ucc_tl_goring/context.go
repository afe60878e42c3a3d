//go:build ucc

package main

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/ucx"
)

// tlContext is a goring context: the UCX context its teams' workers come
// from, and the options.
type tlContext struct {
	opts options
	uctx *ucx.Context
}

func newContext(optStr string) (*tlContext, error) {
	opts, err := parseOptions(optStr)
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
	uctx, err := ucx.Init(ucx.Options{Config: cfg})
	if err != nil {
		return nil, resourceErr{err}
	}
	return &tlContext{opts: opts, uctx: uctx}, nil
}

func (c *tlContext) close() error { return c.uctx.Close() }

// A card is what a rank publishes to its team: "GRC1", the host name
// (uint16 length + bytes) and the UCX worker address (uint32 length +
// bytes), little-endian.
const cardMagic = "GRC1"

type card struct {
	host string
	addr []byte
}

func encodeCard(host string, addr []byte) []byte {
	b := make([]byte, 0, 4+2+len(host)+4+len(addr))
	b = append(b, cardMagic...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(host)))
	b = append(b, host...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(addr)))
	return append(b, addr...)
}

// decodeCard reads the card at the start of slot (padding after it is
// ignored), trusting no length beyond the slot.
func decodeCard(slot []byte) (card, error) {
	if len(slot) < 6 || string(slot[:4]) != cardMagic {
		return card{}, errors.New("not a goring card (wrong magic or too short)")
	}
	hl := int(binary.LittleEndian.Uint16(slot[4:]))
	rest := slot[6:]
	if hl > len(rest) {
		return card{}, fmt.Errorf("host name of %d bytes overruns the %d-byte slot", hl, len(slot))
	}
	host := string(rest[:hl])
	rest = rest[hl:]
	if len(rest) < 4 {
		return card{}, errors.New("card ends before the address length")
	}
	al := int64(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if al == 0 || al > int64(len(rest)) {
		return card{}, fmt.Errorf("address of %d bytes does not fit the %d bytes left in the slot", al, len(rest))
	}
	return card{host: host, addr: append([]byte(nil), rest[:al]...)}, nil
}
