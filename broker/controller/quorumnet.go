package controller

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
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

// classifyTimeout bounds how long an accepted connection may take to
// finish its TLS handshake, when the quorum is secured, and send its
// first byte. A variable for tests.
var classifyTimeout = 10 * time.Second

// maxUnclassified bounds the accepted connections that have not yet sent
// their first byte; more are closed at once, so connections that stall
// their handshake hold neither the listener nor unbounded goroutines.
const maxUnclassified = 64

// TLS secures the quorum's connections (controller.listener.names naming
// an SSL listener): every connection, Raft's, forwarded proposals' and
// broker-only nodes', is TLS, both ends presenting a certificate the
// other checks.
type TLS struct {
	// Server is the accepting end's config: it must require and verify
	// the peer's certificate.
	Server *tls.Config
	// Client returns the dialling end's config, the key material of the
	// moment; an empty ServerName is the dialled host.
	Client func() (*tls.Config, error)
}

// errIsolated is returned by dials while the quorum network is isolated.
var errIsolated = errors.New("quorum network isolated")

// quorumNet is a voter's quorum listener and dialer: a raft.StreamLayer
// for hashicorp/raft's NetworkTransport that also hands connections
// starting with forwardMagic to the forwarding server. It tracks every
// connection it makes or accepts, so Isolate can cut them all and refuse
// new ones until Heal: the fault switch for isolation tests. With tls set
// every connection is TLS: a peer whose handshake fails (plaintext, no
// certificate, one the truststore does not vouch for) is logged and
// closed.
type quorumNet struct {
	ln       net.Listener
	log      *slog.Logger
	tls      *TLS // nil: plaintext
	raftCh   chan net.Conn
	serve    func(net.Conn) // handles a forwarding connection; owns it
	isolated atomic.Bool
	done     chan struct{}
	wg       sync.WaitGroup
	// unclassified holds a token per accepted connection not yet
	// classified (maxUnclassified).
	unclassified chan struct{}

	mu struct {
		sync.Mutex
		conns  map[net.Conn]struct{}
		closed bool
	}
}

var _ raft.StreamLayer = (*quorumNet)(nil)

func listenQuorum(addr string, ln net.Listener, log *slog.Logger, secure *TLS, serve func(net.Conn)) (*quorumNet, error) {
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("controller: listen on quorum address %s: %w", addr, err)
		}
	}
	q := &quorumNet{ln: ln, log: log, tls: secure, raftCh: make(chan net.Conn), serve: serve, done: make(chan struct{}),
		unclassified: make(chan struct{}, maxUnclassified)}
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
		select {
		case q.unclassified <- struct{}{}:
		default:
			q.log.Warn("quorum connection refused: too many connections have not sent their first bytes", "remote", c.RemoteAddr().String(), "limit", maxUnclassified)
			tc.Close()
			continue
		}
		q.wg.Add(1)
		go q.classify(tc)
	}
}

// classify reads a connection's first byte and hands it to Raft or to the
// forwarding server.
func (q *quorumNet) classify(c *trackedConn) {
	defer q.wg.Done()
	conn, first, ok := q.open(c)
	<-q.unclassified
	if !ok {
		return
	}
	if first == forwardMagic {
		_, _ = conn.r.Discard(1)
		q.serve(conn)
		return
	}
	select {
	case q.raftCh <- conn:
	case <-q.done:
		conn.Close()
	}
}

// open makes an accepted connection ready to read, within
// classifyTimeout: its TLS handshake done when the quorum is secured, and
// its first byte peeked. On failure it closes c.
func (q *quorumNet) open(c *trackedConn) (*bufferedConn, byte, bool) {
	_ = c.SetDeadline(time.Now().Add(classifyTimeout))
	var conn net.Conn = c
	if q.tls != nil {
		tc := tls.Server(c, q.tls.Server)
		if err := tc.Handshake(); err != nil {
			c.Close()
			if !errors.Is(err, io.EOF) { // EOF: a peer that only checked the port is open
				q.log.Warn("quorum connection refused: TLS handshake failed", "remote", c.RemoteAddr().String(), "err", err)
			}
			return nil, 0, false
		}
		conn = tc
	}
	br := bufio.NewReader(conn)
	first, err := br.Peek(1)
	if err != nil {
		conn.Close()
		return nil, 0, false
	}
	_ = c.SetDeadline(time.Time{})
	return &bufferedConn{Conn: conn, r: br}, first[0], true
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
	if q.tls == nil {
		return tc, nil
	}
	conn, err := q.handshake(tc, address, timeout)
	if err != nil {
		tc.Close()
		return nil, fmt.Errorf("dial %s: TLS handshake: %w", address, err)
	}
	return conn, nil
}

// handshake runs the TLS handshake of a connection dialled to address,
// bounded by timeout.
func (q *quorumNet) handshake(c net.Conn, address string, timeout time.Duration) (net.Conn, error) {
	cfg, err := q.tls.Client()
	if err != nil {
		return nil, err
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(address)
	}
	tc := tls.Client(c, cfg)
	_ = c.SetDeadline(time.Now().Add(timeout))
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	return tc, nil
}

// reachable reports whether a peer's quorum address takes connections,
// without a handshake.
func (q *quorumNet) reachable(address string, timeout time.Duration) bool {
	if q.isolated.Load() {
		return false
	}
	c, err := net.DialTimeout("tcp", address, timeout)
	if err != nil {
		return false
	}
	c.Close()
	return true
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
