package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// Peers is the node's client of the other nodes' Kafka listeners, for the
// inter-broker requests of the coordinators: WriteTxnMarkers from the
// transaction coordinator to partition leaders (Kafka's
// TransactionMarkerChannelManager) and AddPartitionsToTxn from partition
// leaders to transaction coordinators (Kafka's AddPartitionsToTxnManager).
// Requests are encoded with kmsg; only the frame and the request and
// response headers are written here.
//
// Bounds: one connection per destination node, one request on it at a
// time (a caller waits for it, bounded by its context), a dial timeout of
// peerDialTimeout, at most peerRequestTimeout per exchange and responses of
// at most peerMaxResponseBytes. A connection that fails in any way is
// closed and dialled again on the next request; retrying a failed request
// is the caller's choice (the transaction coordinator retries markers with
// backoff, as Kafka's does). A single node never uses it: every partition
// and coordinator is local.
type Peers struct {
	// resolve gives the Kafka address of a live node, false for none.
	resolve func(id int32) (string, bool)
	dial    wire.DialConfig
	// sent counts the requests sent (Sent).
	sent atomic.Int64

	mu struct {
		sync.Mutex
		conns  map[int32]*peerConn
		closed bool
	}
}

const (
	peerDialTimeout      = 2 * time.Second
	peerRequestTimeout   = 10 * time.Second
	peerMaxResponseBytes = 8 << 20
)

// ErrPeerUnavailable is a request that could not reach its destination:
// no such live node in the metadata image, a failed dial or exchange.
var ErrPeerUnavailable = errors.New("coordinator: peer node unavailable")

// Sent counts the requests sent, for tests that check a single node
// sends none.
func (p *Peers) Sent() int64 { return p.sent.Load() }

// peerConn is the connection to one destination node. sem holds its one
// slot: whoever holds it owns conn.
type peerConn struct {
	id   int32
	sem  chan struct{}
	conn *wire.Conn
	addr string
}

// NewPeers returns the client of node self, which finds the other nodes
// through resolve; cut, if set, is the node's fault switch (the node's
// Isolate).
func NewPeers(self int32, resolve func(id int32) (string, bool), cut *wire.Switch, secure wire.DialConfig) *Peers {
	dial := secure
	dial.ClientID, dial.Timeout, dial.MaxFrame, dial.Switch = wire.PeerClientID(self), peerDialTimeout, peerMaxResponseBytes, cut
	p := &Peers{resolve: resolve, dial: dial}
	p.mu.conns = make(map[int32]*peerConn)
	return p
}

// Close closes every connection; requests after it fail.
func (p *Peers) Close() {
	p.mu.Lock()
	p.mu.closed = true
	conns := p.mu.conns
	p.mu.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.sem <- struct{}{} // wait for its request to end
		if c.conn != nil {
			c.conn.Close()
		}
	}
}

// Request sends req to node id and returns its response. req must have its
// version set.
func (p *Peers) Request(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	addr, ok := p.resolve(id)
	if !ok {
		return nil, fmt.Errorf("node %d is not a live broker: %w", id, ErrPeerUnavailable)
	}
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("node closing: %w", ErrPeerUnavailable)
	}
	c := p.mu.conns[id]
	if c == nil {
		c = &peerConn{id: id, sem: make(chan struct{}, 1)}
		p.mu.conns[id] = c
	}
	p.mu.Unlock()

	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()
	p.sent.Add(1)
	resp, err := c.exchange(ctx, p.dial, addr, req)
	if err != nil {
		if c.conn != nil {
			c.conn.Close()
			c.conn = nil
		}
		return nil, fmt.Errorf("%s to node %d at %s: %w: %w", kmsg.NameForKey(req.Key()), id, addr, ErrPeerUnavailable, err)
	}
	return resp, nil
}

// exchange writes req and reads its response on the connection, dialling
// addr first if needed (or if the node moved). The caller holds c.sem.
func (c *peerConn) exchange(ctx context.Context, dial wire.DialConfig, addr string, req kmsg.Request) (kmsg.Response, error) {
	if c.conn != nil && c.addr != addr {
		c.conn.Close()
		c.conn = nil
	}
	if c.conn == nil {
		conn, err := wire.Dial(ctx, addr, dial)
		if err != nil {
			return nil, err
		}
		c.conn, c.addr = conn, addr
	}
	return c.conn.Do(ctx, req, peerRequestTimeout)
}
