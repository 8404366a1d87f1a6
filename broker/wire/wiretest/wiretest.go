// Package wiretest is a fake Kafka listener for tests of the node-to-node
// client (wire.Conn and its callers): it answers each request frame with
// bytes the test makes, right or wrong.
package wiretest

import (
	"bufio"
	"encoding/binary"
	"net"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// Server is a listener on loopback, closed by t.Cleanup.
type Server struct {
	// Addr is the listener's host:port.
	Addr string
	// Accepts counts the connections accepted.
	Accepts atomic.Int32
}

// Serve answers each request frame on every connection with answer(h),
// h the request's header: the response frame after its size prefix, or
// nil for no answer (a stalled node).
func Serve(t testing.TB, answer func(h wire.Header) []byte) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &Server{Addr: ln.Addr().String()}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.Accepts.Add(1)
			go serve(nc, answer)
		}
	}()
	return s
}

func serve(nc net.Conn, answer func(h wire.Header) []byte) {
	defer nc.Close()
	rd := bufio.NewReader(nc)
	for {
		frame, _, err := wire.ReadFrame(rd, 1<<20, nil, nil)
		if err != nil {
			return
		}
		h, _, err := wire.ParseHeader(frame, flexible)
		if err != nil {
			return
		}
		b := answer(h)
		if b == nil {
			continue
		}
		bufs := net.Buffers{binary.BigEndian.AppendUint32(nil, uint32(len(b))), b}
		if _, err := bufs.WriteTo(nc); err != nil {
			return
		}
	}
}

func flexible(key, version int16) bool {
	r := kmsg.RequestForKey(key)
	if r == nil {
		return false
	}
	r.SetVersion(version)
	return r.IsFlexible()
}
