package controller

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
)

// listenSecured starts a quorum listener on a free port whose TLS
// connections never get past their handshake's first message: a
// connection that sends nothing meets the handshake deadline.
func listenSecured(t *testing.T) *quorumNet {
	t.Helper()
	secure := &TLS{Server: &tls.Config{}, Client: func() (*tls.Config, error) { return nil, errors.New("no dials") }}
	q, err := listenQuorum("127.0.0.1:0", nil, testkit.Logger(t, slog.LevelWarn), secure, func(c net.Conn) { c.Close() })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// TestQuorumHandshakeDeadline: a peer of the secured quorum that never
// finishes its TLS handshake is closed at classifyTimeout.
func TestQuorumHandshakeDeadline(t *testing.T) {
	// Put back after the listener's Cleanup closed it: cleanups run
	// last registered first.
	saved := classifyTimeout
	t.Cleanup(func() { classifyTimeout = saved })
	classifyTimeout = 300 * time.Millisecond
	q := listenSecured(t)
	start := time.Now()
	if err := testkit.Refuses(q.Addr().String(), nil, nil); err != nil {
		t.Fatalf("a peer stalling its handshake: %v after %v", err, time.Since(start))
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("closed after %v, before the handshake deadline (300ms)", took)
	}
}

// TestQuorumUnclassifiedBound: with maxUnclassified connections stalled
// in their handshakes, one more is closed at once rather than held.
func TestQuorumUnclassifiedBound(t *testing.T) {
	q := listenSecured(t)
	for range maxUnclassified {
		c, err := net.Dial("tcp", q.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	testkit.WaitFor(t, "the stalled connections to fill the bound", func() (bool, string) {
		return len(q.unclassified) == maxUnclassified, strconv.Itoa(len(q.unclassified))
	})
	start := time.Now()
	if err := testkit.Refuses(q.Addr().String(), nil, nil); err != nil {
		t.Fatalf("one connection over the bound: %v", err)
	}
	// Well before classifyTimeout (10 s): closed by the bound, not the
	// deadline.
	if took := time.Since(start); took > classifyTimeout/2 {
		t.Errorf("one connection over the bound was closed after %v", took)
	}
}
