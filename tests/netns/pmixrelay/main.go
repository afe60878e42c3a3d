// Command pmixrelay lets the ranks of an MPI job that run inside a node
// namespace of the testbed (tests/netns/testbed.sh) reach the job's PMIx
// server, which listens on the loopback of the namespace mpirun runs in:
// it listens on 127.0.0.1:PORT inside the node's namespace and carries
// each connection to 127.0.0.1:PORT of its own namespace. Only the
// launcher's rendezvous goes through it; the job's data stays on the
// testbed's rails (tests/netns/in_node.sh starts it, tests/netns/ucc.sh
// uses it).
//
//	pmixrelay -netns PREFIX-node0 -port PORT -ready FILE
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"github.com/goring-hpc/goring/launch"
)

func main() {
	ns := flag.String("netns", "", "the node's network namespace (ip netns name)")
	port := flag.Int("port", 0, "the PMIx server's TCP port on this namespace's loopback")
	ready := flag.String("ready", "", "file written once the relay listens")
	flag.Parse()
	if *ns == "" || *port <= 0 {
		fmt.Fprintln(os.Stderr, "pmixrelay: -netns and -port are required")
		os.Exit(2)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", *port)
	var ln net.Listener
	// The listening socket is made inside the node's namespace and keeps
	// accepting there; every dial below is made from this namespace.
	err := launch.InNetns(*ns, func() error {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pmixrelay: %s: %v\n", *ns, err)
		os.Exit(1)
	}
	if *ready != "" {
		_ = os.WriteFile(*ready, nil, 0o644)
	}
	for {
		in, err := ln.Accept()
		if err != nil {
			os.Exit(0)
		}
		go func() {
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				return
			}
			var wg sync.WaitGroup
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				_, _ = io.Copy(dst, src)
				if c, ok := dst.(*net.TCPConn); ok {
					_ = c.CloseWrite()
				}
			}
			go pipe(out, in)
			go pipe(in, out)
			wg.Wait()
			in.Close()
			out.Close()
		}()
	}
}
