package wire_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/devca"
)

// TestSlowTLSReaderKeepsItsConnection: a TLS client that takes a large
// answer slowly but steadily keeps its connection, as over plaintext; the
// progress timeout bounds a wait for the client to take bytes, not the
// whole answer. Before, one Write of the answer to the tls.Conn had the
// whole timeout, and the connection was closed mid-answer.
func TestSlowTLSReaderKeepsItsConnection(t *testing.T) {
	// The client takes 16 KiB every 20ms: the 2 MiB answer takes at
	// least 2.6 s, past the 2 s timeout, while no wait for the next bytes
	// comes near it, however loaded the machine.
	const (
		progress = 2 * time.Second
		size     = 2 << 20
	)
	lim := testLimits()
	lim.ProgressTimeout = progress
	ca, err := devca.Ensure(t.TempDir(), []string{"127.0.0.1"}, []int32{0})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(ca.Nodes[0].PEM, ca.Nodes[0].PEM)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	records := make([]byte, size)
	_, ln := serveOn(t, &pacedListener{Listener: raw, piece: 16 << 10, pace: 20 * time.Millisecond}, fakeHandler{func(_ context.Context, _ *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(req.GetVersion())
		topic := kmsg.NewFetchResponseTopic()
		topic.Topic = "t"
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches = records
		topic.Partitions = append(topic.Partitions, p)
		resp.Topics = append(resp.Topics, topic)
		return wire.Reply{Response: resp}, nil
	}}, lim, func(cfg *wire.ServerConfig) {
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	})

	pem, err := os.ReadFile(ca.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	nc, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &client{t: t, nc: nc, rd: bufio.NewReader(nc), f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("test"))}
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	c.send(req, 1)
	start := time.Now()
	nc.SetReadDeadline(start.Add(time.Minute))
	frame, _, err := wire.ReadFrame(c.rd, 2*size, nil, nil)
	if err != nil {
		t.Fatalf("reading the %d-byte answer at 16 KiB per 20ms: %v after %v (progress timeout %v)", size, err, time.Since(start), progress)
	}
	if len(frame) < size {
		t.Fatalf("answer of %d bytes, want more than %d", len(frame), size)
	}
}

// pacedListener's connections write at most piece bytes at a time, pace
// apart: the socket of a slow client. They honour write deadlines before
// each piece, as a socket does.
type pacedListener struct {
	net.Listener
	piece int
	pace  time.Duration
}

func (l *pacedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &pacedConn{Conn: c, l: l}, nil
}

type pacedConn struct {
	net.Conn
	l        *pacedListener
	mu       sync.Mutex
	deadline time.Time
}

func (c *pacedConn) SetDeadline(t time.Time) error {
	c.setWriteDeadline(t)
	return c.Conn.SetDeadline(t)
}

func (c *pacedConn) SetWriteDeadline(t time.Time) error {
	c.setWriteDeadline(t)
	return c.Conn.SetWriteDeadline(t)
}

func (c *pacedConn) setWriteDeadline(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
}

func (c *pacedConn) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		c.mu.Lock()
		dl := c.deadline
		c.mu.Unlock()
		if !dl.IsZero() && time.Now().After(dl) {
			return n, os.ErrDeadlineExceeded
		}
		m, err := c.Conn.Write(p[:min(len(p), c.l.piece)])
		n, p = n+m, p[m:]
		if err != nil {
			return n, err
		}
		time.Sleep(c.l.pace)
	}
	return n, nil
}
