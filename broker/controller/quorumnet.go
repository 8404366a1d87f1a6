package controller

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// forwardMagic is the first byte of a connection that carries forwarded
// proposals; any other first byte is Raft's own RPC type (0 to 4 in
// hashicorp/raft's NetworkTransport), so both share the voter's address.
const forwardMagic byte = 'K'

// classifyTimeout bounds how long an accepted connection may take to send
// its first byte.
const classifyTimeout = 10 * time.Second

// errIsolated is returned by dials while the quorum network is isolated.
var errIsolated = errors.New("quorum network isolated")

// quorumNet is a voter's quorum listener and dialer: a raft.StreamLayer
// for hashicorp/raft's NetworkTransport that also hands connections
// starting with forwardMagic to the forwarding server. It tracks every
// connection it makes or accepts, so Isolate can cut them all and refuse
// new ones until Heal: the fault switch for isolation tests.
type quorumNet struct {
	ln       net.Listener
	log      *slog.Logger
	raftCh   chan net.Conn
	serve    func(net.Conn) // handles a forwarding connection; owns it
	isolated atomic.Bool
	done     chan struct{}
	wg       sync.WaitGroup

	mu struct {
		sync.Mutex
		conns  map[net.Conn]struct{}
		closed bool
	}
}

var _ raft.StreamLayer = (*quorumNet)(nil)

func listenQuorum(addr string, ln net.Listener, log *slog.Logger, serve func(net.Conn)) (*quorumNet, error) {
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("controller: listen on quorum address %s: %w", addr, err)
		}
	}
	q := &quorumNet{ln: ln, log: log, raftCh: make(chan net.Conn), serve: serve, done: make(chan struct{})}
	q.mu.conns = make(map[net.Conn]struct{})
	q.wg.Add(1)
	go q.acceptLoop()
	return q, nil
}

func (q *quorumNet) acceptLoop() {
	defer q.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		c, err := q.ln.Accept()
		if err != nil {
			select {
			case <-q.done:
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		tc, err := q.track(c)
		if errors.Is(err, errIsolated) {
			continue
		}
		if err != nil {
			return
		}
		q.wg.Add(1)
		go q.classify(tc)
	}
}

// classify reads a connection's first byte and hands it to Raft or to the
// forwarding server.
func (q *quorumNet) classify(c *trackedConn) {
	defer q.wg.Done()
	_ = c.SetReadDeadline(time.Now().Add(classifyTimeout))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if first[0] == forwardMagic {
		_, _ = br.Discard(1)
		q.serve(&bufferedConn{Conn: c, r: br})
		return
	}
	select {
	case q.raftCh <- &bufferedConn{Conn: c, r: br}:
	case <-q.done:
		c.Close()
	}
}

// Accept hands Raft its next connection.
func (q *quorumNet) Accept() (net.Conn, error) {
	select {
	case c := <-q.raftCh:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

// Close stops listening and closes every connection. It is idempotent.
func (q *quorumNet) Close() error {
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		return nil
	}
	q.mu.closed = true
	close(q.done)
	conns := q.mu.conns
	q.mu.conns = nil
	q.mu.Unlock()
	err := q.ln.Close()
	for c := range conns {
		c.Close()
	}
	q.wg.Wait()
	return err
}

// Addr is the listener's address.
func (q *quorumNet) Addr() net.Addr { return q.ln.Addr() }

// Dial connects to a peer's quorum address for Raft.
func (q *quorumNet) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return q.dial(string(address), timeout)
}

func (q *quorumNet) dial(address string, timeout time.Duration) (net.Conn, error) {
	if q.isolated.Load() {
		return nil, fmt.Errorf("dial %s: %w", address, errIsolated)
	}
	c, err := net.DialTimeout("tcp", address, timeout)
	if err != nil {
		return nil, err
	}
	tc, err := q.track(c)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	return tc, nil
}

// dialForward connects to a peer's forwarding server.
func (q *quorumNet) dialForward(address string, timeout time.Duration) (net.Conn, error) {
	c, err := q.dial(address, timeout)
	if err != nil {
		return nil, err
	}
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte{forwardMagic}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Isolate drops all traffic to and from the peers: every open connection
// is closed, and dials and accepted connections fail until Heal.
func (q *quorumNet) Isolate() {
	q.mu.Lock()
	q.isolated.Store(true)
	conns := make([]net.Conn, 0, len(q.mu.conns))
	for c := range q.mu.conns {
		conns = append(conns, c)
	}
	q.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	q.log.Info("quorum network isolated", "connections_cut", len(conns))
}

// Heal ends an isolation.
func (q *quorumNet) Heal() {
	q.isolated.Store(false)
	q.log.Info("quorum network healed")
}

func (q *quorumNet) track(c net.Conn) (*trackedConn, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.mu.closed:
		c.Close()
		return nil, net.ErrClosed
	case q.isolated.Load():
		// Checked under the lock Isolate cuts under: a connection made
		// while it cuts is refused, never left open behind the cut.
		c.Close()
		return nil, errIsolated
	}
	tc := &trackedConn{Conn: c, q: q}
	q.mu.conns[tc] = struct{}{}
	return tc, nil
}

// trackedConn removes itself from its quorumNet on Close.
type trackedConn struct {
	net.Conn
	q    *quorumNet
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.q.mu.Lock()
		delete(c.q.mu.conns, c)
		c.q.mu.Unlock()
	})
	return c.Conn.Close()
}

// bufferedConn reads through the reader that peeked its first byte.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
