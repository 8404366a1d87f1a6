package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The server side: a Server accepts a listener's connections and serves
// each with the loop in serverconn.go, handing every decoded request to a
// Handler and writing the answers back in request order.
//
// Connections process requests one at a time, in order, as Kafka does: the
// next request is read only after the previous one was handled. Responses
// are written by a second goroutine so that writing a large fetch response
// overlaps with reading and handling the next request.
//
// A client that sends requests and does not take their responses must not
// make the node hold them without bound. Kafka mutes a channel from the
// moment a request is received until its response is sent
// (SocketServer.Processor, ChannelMuteEvent.REQUEST_RECEIVED and
// RESPONSE_SENT), so it holds one response per connection. klog lets a
// connection run ahead of its writer, within bounds: the next request is
// read only while the connection has fewer than
// klog.max.inflight.requests.per.connection responses unwritten, they hold less
// than klog.queued.max.response.bytes.per.connection, and the responses of all
// connections together hold less than klog.queued.max.response.bytes. A
// connection with no response unwritten is always read, so a slow reader
// never stops the others from being served. The response it may then hold
// past the bounds is small unless it is a fetch, and a fetch reads record
// data only with room for it taken from klog.queued.max.response.bytes
// first, room the queue then takes over with the response (Reply.Reserved).
// A response that makes no write progress for
// socket.request.progress.timeout.ms closes its connection, so a client
// that stops reading holds the budget that long at most.

// Accept errors (out of file descriptors, EMFILE, say) are retried after a
// pause, as net/http's Server.Serve does: minAcceptBackoff, doubling up to
// maxAcceptBackoff, and back to the start after a success.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// lingerTimeout bounds how long a drained connection reads what its client
// still sends after the node's last answer, and lingerBytes how much.
const (
	lingerTimeout = 500 * time.Millisecond
	lingerBytes   = 16 << 20
)

// Handler serves the requests of a Server's connections. The Server
// decodes each request with kmsg and calls Handle on the connection's
// goroutine; a panic in Handle or in a deferred answer (Reply.Later) is
// logged and closes only its connection.
type Handler interface {
	// Serves reports whether the handler serves key at version. A
	// request it does not serve is not decoded: Unserved answers it.
	Serves(key, version int16) bool
	// Unserved answers a request of a key or version Serves refused, by
	// its header alone (rc.Header). A nil response sends nothing; an
	// error closes the connection.
	Unserved(rc *RequestContext) (kmsg.Response, error)
	// Handle serves one decoded request. An error closes the connection
	// and drops the reply.
	Handle(ctx context.Context, rc *RequestContext, req kmsg.Request) (Reply, error)
}

// Reply is a handler's answer to one request.
type Reply struct {
	// Response is sent back; nil sends nothing (an acks=0 produce).
	Response kmsg.Response
	// Release, if set, is called once Response was encoded, or when the
	// reply is dropped: buffers the response points into go back.
	Release func()
	// SizeHint, if set, is about the size Response encodes to: a large
	// response is encoded into one buffer of that size, not copied as it
	// grows.
	SizeHint int
	// Reserved is what the handler took from the Server's response pool
	// (ServerConfig.Responses) for the encoded response: the response
	// queue takes it over with the response, or it is given back when the
	// reply is dropped.
	Reserved int64
	// Later, if set, finishes the request in place of Response: the
	// handler did what must happen in the connection's order (a
	// produce's appends) and Later waits for the rest (replication,
	// fsync) while the connection reads its next requests, up to
	// klog.max.inflight.requests.per.connection at once, as franz-go and
	// librdkafka pipeline produces. Its answer is still written in the
	// connection's order. Only a Produce may defer: a request of another
	// API waits until every answer deferred before it is ready, so it
	// sees what Kafka, which handles a connection's requests one at a
	// time, would show it. Later runs under a context the connection's
	// end cancels, except in a drain, where it finishes and its answer is
	// written.
	Later func(ctx context.Context) kmsg.Response
	// Close closes the connection once Response is written: a failed
	// SASL authentication's answer, as Kafka sends it before closing.
	Close bool
	// Throttle, if set, mutes the connection for that long once the
	// answer is queued (or, deferred, once the handler returned; or,
	// with no answer, at once): it reads no further request until then,
	// as Kafka mutes the channel of a client over its quota (KIP-219).
	// The Response carries the same throttle_time_ms, so that the client
	// backs off too. A drain ends the mute.
	Throttle time.Duration
}

// Limits are the bounds of a Server's connections that a node's dynamic
// configs may change: the Server reads them at each accept, and each
// connection once as it starts.
type Limits struct {
	// ProgressTimeout bounds the wait for the next byte of a request
	// being read, for room in the request pool, and for a response
	// write to make progress (socket.request.progress.timeout.ms);
	// zero or negative: no bound on writes.
	ProgressTimeout time.Duration
	// MaxIdle closes a connection that starts no request for that long
	// (connections.max.idle.ms); negative: never.
	MaxIdle time.Duration
	// MaxInflight bounds the responses of a connection waiting to be
	// written (klog.max.inflight.requests.per.connection).
	MaxInflight int
	// MaxQueuedResponseBytes bounds their bytes
	// (klog.queued.max.response.bytes.per.connection).
	MaxQueuedResponseBytes int64
	// MaxConnections and MaxConnectionsPerIP bound the open connections
	// (max.connections, max.connections.per.ip).
	MaxConnections      int
	MaxConnectionsPerIP int
}

// ServerConfig configures a Server.
type ServerConfig struct {
	// Listener is the name of the listener the Server serves
	// (RequestContext.Listener).
	Listener string
	// Logger receives the Server's logs; nil discards them.
	Logger *slog.Logger
	// MaxRequestBytes bounds a request frame (socket.request.max.bytes).
	MaxRequestBytes int32
	// Requests holds the bytes of requests being read or handled, and
	// what they decode into (queued.max.request.bytes).
	Requests *Pool
	// Responses counts the bytes of responses waiting to be written
	// (klog.queued.max.response.bytes).
	Responses *Pool
	// Limits returns the connections' current bounds.
	Limits func() Limits
	// TLS, when set, serves the listener's connections over TLS: each
	// handshake must finish within socket.request.progress.timeout.ms
	// (Limits.ProgressTimeout). GetConfigForClient may give each
	// connection the key material of the moment.
	TLS *tls.Config
	// TLSPrincipal, when set, is the principal of a TLS connection, from
	// its handshake (the client's certificate); an error closes the
	// connection. Unset, or without TLS: AnonymousPrincipal.
	TLSPrincipal func(tls.ConnectionState) (string, error)
	// TLSFailed, when set, hears of each connection refused at its TLS
	// handshake, or by TLSPrincipal, with why (TLSFailure), but for one
	// that closed before sending a byte (a check that the port is open).
	TLSFailed func(remote string, f TLSFailure)
	// SASL has the listener's connections authenticate with SASL before
	// any other request (security.go).
	SASL bool
	// Switch tracks the connections of other klog nodes, known by their
	// client id (IsPeerClientID): its Isolate closes them, and while it is
	// isolated they are closed at their first request. nil tracks none.
	Switch *Switch
}

// Server serves a listener's connections with a Handler.
type Server struct {
	cfg    ServerConfig
	h      Handler
	logger *slog.Logger
	// draining is set by Drain: client connections read no further
	// request.
	draining atomic.Bool
	// drained is closed when Drain begins: muted connections stop
	// waiting (Reply.Throttle).
	drained chan struct{}
	// paused counts the connections not read because their responses
	// are not being taken.
	paused atomic.Int64

	mu struct {
		sync.Mutex
		// conns are the open connections; true for another node's.
		conns map[net.Conn]bool
		// connGone is closed, and replaced, when a connection ends
		// while the Server drains them.
		connGone chan struct{}
		// connsPerIP counts conns by remote IP (max.connections.per.ip).
		connsPerIP map[string]int
	}
}

// NewServer returns a Server of h; Serve starts it.
func NewServer(cfg ServerConfig, h Handler) *Server {
	s := &Server{cfg: cfg, h: h, logger: cfg.Logger, drained: make(chan struct{})}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.mu.conns = make(map[net.Conn]bool)
	s.mu.connGone = make(chan struct{})
	s.mu.connsPerIP = make(map[string]int)
	return s
}

// Serve accepts ln's connections and serves them until ctx is done, then
// closes every connection and returns once each has ended. Closing ln
// stops accepting; the connections open go on (Drain ends them gently).
// Handlers run under ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := accept(ctx, ln, s.logger)
		if err != nil {
			break
		}
		ip, ok := s.admit(ctx, c)
		if !ok {
			continue
		}
		wg.Go(func() {
			s.serveConn(ctx, c)
			s.gone(c, ip)
		})
	}
	<-ctx.Done()
	s.mu.Lock()
	for c := range s.mu.conns {
		c.Close()
	}
	s.mu.Unlock()
}

// admit registers a new connection, or closes it: once the Server drains
// or ctx is done, or when it is over max.connections or
// max.connections.per.ip. Like Kafka's ConnectionQuotas, it refuses the
// connection from an address over its limit; for the node-wide limit,
// where Kafka's acceptor waits for a slot, klog closes the new connection
// too, so that accepting never stalls.
func (s *Server) admit(ctx context.Context, c net.Conn) (ip string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining.Load() || ctx.Err() != nil {
		c.Close()
		return "", false
	}
	ip = remoteIP(c)
	lim := s.cfg.Limits()
	var err error
	switch {
	case len(s.mu.conns) >= lim.MaxConnections:
		err = fmt.Errorf("%w: max.connections is %d", errTooManyConnections, lim.MaxConnections)
	case s.mu.connsPerIP[ip] >= lim.MaxConnectionsPerIP:
		err = fmt.Errorf("%w: max.connections.per.ip is %d", errTooManyConnections, lim.MaxConnectionsPerIP)
	}
	if err != nil {
		s.logger.Debug("closing connection at accept", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return "", false
	}
	s.mu.conns[c] = false
	s.mu.connsPerIP[ip]++
	return ip, true
}

// gone unregisters a connection that ended.
func (s *Server) gone(c net.Conn, ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.conns, c)
	if s.draining.Load() {
		close(s.mu.connGone)
		s.mu.connGone = make(chan struct{})
	}
	if s.mu.connsPerIP[ip]--; s.mu.connsPerIP[ip] == 0 {
		delete(s.mu.connsPerIP, ip)
	}
}

// markPeer marks c as another node's connection: Drain leaves it open.
func (s *Server) markPeer(c net.Conn) {
	s.mu.Lock()
	if _, ok := s.mu.conns[c]; ok {
		s.mu.conns[c] = true
	}
	s.mu.Unlock()
}

// errTooManyConnections refuses a connection at accept: the Server
// already serves max.connections, or max.connections.per.ip from its
// address.
var errTooManyConnections = errors.New("too many connections")

// accept returns the next connection of ln. When accepting fails it
// waits before trying again, backing off from minAcceptBackoff to
// maxAcceptBackoff, and logs each failure with its wait: once the wait
// has reached maxAcceptBackoff, a listener that keeps failing costs one
// attempt and one log line per maxAcceptBackoff. Unlike net/http, which
// returns on an error that is not temporary, accept retries every error,
// so that the node never stops accepting for good; it returns an error
// only once ctx is done or ln is closed.
func accept(ctx context.Context, ln net.Listener, logger *slog.Logger) (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		delay = min(max(2*delay, minAcceptBackoff), maxAcceptBackoff)
		logger.Warn("accept failed; retrying", "err", err, "in", delay)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// remoteIP is the address a connection comes from, without its port.
func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}

// PausedConnections returns how many connections are not being read
// because their responses are not being taken.
func (s *Server) PausedConnections() int64 { return s.paused.Load() }

// PeerConnections returns how many of the Server's connections are
// other nodes' (IsPeerClientID).
func (s *Server) PeerConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, peer := range s.mu.conns {
		if peer {
			n++
		}
	}
	return n
}

// Draining reports whether Drain has begun.
func (s *Server) Draining() bool { return s.draining.Load() }

// Drain stops every client connection reading requests and waits, for at
// most timeout, until each has ended: the request it was handling
// answered and every answer written. A produce the log appended is
// acknowledged, so the client does not send it again after a restart,
// when only the last batch of each producer is known to deduplicate it
// (the producer snapshot keeps one). A fetch waiting for data, which
// changes nothing, ends at once as for a client gone
// (RequestContext.UntilHangup); another node's connection is served until
// Serve's context ends: a follower's fetches move the high watermark that
// an acks=all produce waits for. Close the listener first, or new
// connections are refused as they come.
func (s *Server) Drain(timeout time.Duration) {
	if !s.draining.Swap(true) {
		close(s.drained)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	woken := false
	for {
		s.mu.Lock()
		clients := 0
		for c, peer := range s.mu.conns {
			if peer {
				continue
			}
			clients++
			if !woken {
				// Wake a connection idle before its next request; one
				// reading a request re-arms its deadline and finishes it.
				c.SetReadDeadline(time.Unix(1, 0))
			}
		}
		gone := s.mu.connGone
		s.mu.Unlock()
		woken = true
		if clients == 0 {
			return
		}
		select {
		case <-gone:
		case <-deadline.C:
			s.logger.Info("closing connections still busy after the drain", "connections", clients, "after", timeout)
			return
		}
	}
}

// closeGently ends a drained connection whose answers are all written:
// it sends FIN, then reads what the client still sends until it closes
// its side (for at most lingerTimeout and lingerBytes). Closing with
// unread bytes would reset the connection, and a reset may discard the
// answers the client has received but not yet read.
func closeGently(nc net.Conn) {
	tc, ok := nc.(interface {
		net.Conn
		CloseWrite() error
	})
	if !ok || tc.CloseWrite() != nil {
		return
	}
	tc.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.Copy(io.Discard, io.LimitReader(tc, lingerBytes))
}
