package launch

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// ProtocolVersion is the version of the coordinator protocol. A hello with
// any other version is rejected.
const ProtocolVersion = 1

// MaxFrameBytes bounds every frame either side reads.
const MaxFrameBytes = 1 << 20

// Message types.
const (
	msgHello     = "hello"
	msgWelcome   = "welcome"
	msgGather    = "gather"
	msgGathered  = "gathered"
	msgHeartbeat = "heartbeat"
	msgFail      = "fail"
	msgBye       = "bye"
	msgError     = "error"
)

// Peer is one rank as the coordinator's table describes it.
type Peer struct {
	Rank  int    `json:"rank"`
	Host  string `json:"host"`
	Node  int    `json:"node"`  // emulated node index (topology placement)
	Local int    `json:"local"` // index within the node
	// Payload is opaque to launch; goring bench puts its team cards here
	// (or, running its own executor, its lanes' UCX worker addresses).
	Payload []byte `json:"payload,omitempty"`
}

// message is the one frame type of the protocol; Type says which fields
// are meaningful.
type message struct {
	Type    string   `json:"type"`
	Version int      `json:"version,omitempty"`
	Token   string   `json:"token,omitempty"`
	Rank    int      `json:"rank"`
	Size    int      `json:"size,omitempty"`
	Peer    *Peer    `json:"peer,omitempty"`
	Peers   []Peer   `json:"peers,omitempty"`
	Seq     uint64   `json:"seq,omitempty"`
	Data    []byte   `json:"data,omitempty"`
	All     [][]byte `json:"all,omitempty"`
	Err     string   `json:"err,omitempty"`
}

// errFrameTooLarge is returned for a frame whose length prefix exceeds
// MaxFrameBytes.
var errFrameTooLarge = errors.New("frame larger than the protocol limit")

// writeFrame writes one length-prefixed JSON frame before deadline.
func writeFrame(c net.Conn, m *message, deadline time.Time) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(body) > MaxFrameBytes {
		return fmt.Errorf("%s message of %d bytes: %w", m.Type, len(body), errFrameTooLarge)
	}
	buf := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	copy(buf[4:], body)
	if err := c.SetWriteDeadline(deadline); err != nil {
		return err
	}
	_, err = c.Write(buf)
	return err
}

// readFrame reads one frame before deadline, refusing oversize frames before
// allocating for them and rejecting anything that is not one JSON object
// with a known type.
func readFrame(c net.Conn, deadline time.Time) (*message, error) {
	if err := c.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrameBytes {
		return nil, fmt.Errorf("malformed frame: length %d: %w", n, errFrameTooLarge)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	return decodeMessage(body)
}

// decodeMessage parses and checks one frame body.
func decodeMessage(body []byte) (*message, error) {
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("malformed frame: %v", err)
	}
	switch m.Type {
	case msgHello, msgWelcome, msgGather, msgGathered, msgHeartbeat, msgFail, msgBye, msgError:
	default:
		return nil, fmt.Errorf("malformed frame: unknown message type %q", m.Type)
	}
	return &m, nil
}
