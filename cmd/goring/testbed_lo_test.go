package main

import (
	"io"
	"net"
	"testing"

	"github.com/goring-hpc/goring/launch"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ranks of one node that NCCL takes for different hosts (one NCCL_HOSTID
// a rank: scripts/device_netns_moe.sh, MOE_NCCL_HOSTID=rank, when a
// node's ranks share a GPU) reach each other by TCP at the node's own
// rail addresses. The kernel delivers a packet for a local address
// through lo, so those bytes cross no rail (no tbf, no counter) and NCCL's
// traffic inside a node does not queue behind the rails. A stream to the
// other node, the control, is counted.
func TestTestbedNodeTrafficSkipsRails(t *testing.T) {
	prefix := netnsTestbed(t, 2, 2, "1gbit")
	const local, remote = 16 << 20, 2 << 20

	before := railBytes(t, prefix)
	tcpStream(t, prefix+"-node0", "198.18.1.1", prefix+"-node0", "198.18.0.1", local)
	inside := railBytes(t, prefix) - before
	assert.Less(t, inside, int64(64<<10), "a node's stream between its rail addresses put %d of %d bytes on the rails", inside, local)

	before = railBytes(t, prefix)
	tcpStream(t, prefix+"-node1", "198.18.1.2", prefix+"-node0", "198.18.1.1", remote)
	across := railBytes(t, prefix) - before
	assert.GreaterOrEqual(t, across, int64(remote), "a stream to the other node crosses a rail")
}

// tcpStream sends n bytes from a socket of namespace fromNS (bound to
// from) to a listener of namespace toNS at to, and waits until all have
// arrived.
func tcpStream(t *testing.T, toNS, to, fromNS, from string, n int64) {
	t.Helper()
	var ln net.Listener
	require.NoError(t, launch.InNetns(toNS, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(to, "0"))
		return err
	}))
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		k, _ := io.Copy(io.Discard, c)
		got <- k
	}()
	var c net.Conn
	require.NoError(t, launch.InNetns(fromNS, func() (err error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err = d.Dial("tcp", ln.Addr().String())
		return err
	}))
	_, err := io.CopyN(c, zeros{}, n)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	assert.Equal(t, n, <-got)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
