package wire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AnonymousPrincipal is the principal of a connection that did not
// authenticate, as Kafka names it.
const AnonymousPrincipal = "User:ANONYMOUS"

// RequestContext is what a handler knows of the request it serves and of
// the connection it came on.
type RequestContext struct {
	// Listener is the name of the listener the connection arrived on.
	Listener string
	// Remote is the client's address, host:port.
	Remote string
	// Principal is who the connection authenticated as:
	// AnonymousPrincipal until authentication.
	Principal string
	// ClientID is the client id of the connection's last request that
	// named one.
	ClientID string
	// ClientSoftwareName and ClientSoftwareVersion are what the client
	// said it runs in its last valid ApiVersions v3+ (KIP-511), empty
	// until then.
	ClientSoftwareName, ClientSoftwareVersion string
	// Header is the request's header.
	Header Header
	// Start is when the request's decoding began.
	Start time.Time

	conn *serverConn
}

// UntilHangup returns ctx, also cancelled when the client closes the
// connection while the current request is handled: a long-poll fetch
// that waits for data releases the client's resources at once instead of
// at the end of its wait, and so does one waiting when the Server drains
// (Server.Drain). Only a handler may call it, and it must call stop before
// it returns. While a request is handled nothing else reads the
// connection, so a goroutine waits for its next byte; if that is a
// request the client pipelined, it is left for the connection to read and
// a hang-up after it goes unnoticed until the handler returns. Without a
// connection (rc nil, a request made up in a test) ctx is returned as is.
func (rc *RequestContext) UntilHangup(ctx context.Context) (_ context.Context, stop func()) {
	if rc == nil || rc.conn == nil {
		return ctx, func() {}
	}
	c := rc.conn
	ctx, cancel := context.WithCancel(ctx)
	// No deadline while watching: the handler bounds its own wait, and
	// stop ends the watch with a deadline in the past; the connection's
	// loop arms its own deadlines again before it reads.
	c.sr.timeout = 0
	c.nc.SetReadDeadline(time.Time{})
	if c.s.draining.Load() {
		// The Server drains its connections: a wait ends now, as for a
		// client gone (Drain may have woken the read already).
		c.nc.SetReadDeadline(time.Unix(1, 0))
	}
	var stopping atomic.Bool
	hungUp := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := c.br.Peek(1); err != nil && !stopping.Load() {
			hungUp = true
			cancel()
		}
	}()
	return ctx, func() {
		stopping.Store(true)
		c.nc.SetReadDeadline(time.Unix(1, 0))
		<-done
		c.hungUp = c.hungUp || hungUp
		cancel()
	}
}

// serverConn is one connection a Server serves.
type serverConn struct {
	s  *Server
	nc net.Conn
	// raw is the accepted connection nc wraps (TLS), as the Server
	// registers it.
	raw    net.Conn
	br     *bufio.Reader
	sr     *stallReader
	limits Limits
	logger *slog.Logger
	q      *responseQueue
	// rc holds the connection's part of every request's context.
	rc RequestContext
	// peer is set once the connection is known as another node's;
	// untrack then takes it off the Server's Switch.
	peer    bool
	untrack func()
	// hungUp is set by UntilHangup's stop when the client closed the
	// connection while its request was handled.
	hungUp bool
	// sasl is the connection's authentication on a SASL listener.
	sasl saslState

	// reserve takes a frame's bytes from the request pool as they arrive
	// (ReadFrame); held of them are held, for a frame of heldFrame bytes.
	reserve   func(size, n int) error
	held      int
	heldFrame int
	// charge is what the request being handled decodes into.
	charge *decodeCharge
	// frameBuf is the last frame's buffer, when it may be reused.
	frameBuf []byte
	// deferred counts the deferred answers (Reply.Later) being made.
	deferred sync.WaitGroup
	// mutedUntil is when the connection's last Reply.Throttle ends.
	mutedUntil time.Time
}

// serveConn serves nc until it ends, ctx is done or the Server drains.
func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	defer nc.Close()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	principal, raw := AnonymousPrincipal, nc
	if s.cfg.TLS != nil {
		tc, p, err := s.handshakeTLS(ctx, nc, s.cfg.Limits().ProgressTimeout)
		if err != nil {
			s.logger.Debug("closing connection", "remote", nc.RemoteAddr().String(), "err", err)
			if f, ok := classifyTLSFailure(err); ok && s.cfg.TLSFailed != nil && ctx.Err() == nil {
				s.cfg.TLSFailed(nc.RemoteAddr().String(), f)
			}
			return
		}
		nc, principal = tc, p
	}
	c := s.newConn(ctx, nc)
	c.raw = raw
	c.rc.Principal = principal
	defer func() {
		if !c.peer && s.draining.Load() {
			closeGently(nc)
		}
	}()
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.q.write(nc, c.limits.ProgressTimeout)
	}()
	defer func() {
		close(c.q.out)
		<-writerDone
	}()
	// Deferred answers are made under connCtx: a connection that ends
	// cancels their waits, except in a drain, where they finish (their
	// own timeouts bound them) and are written.
	connCtx, cancelConn := context.WithCancel(ctx)
	defer func() {
		if s.draining.Load() {
			c.deferred.Wait()
		}
		cancelConn()
		c.deferred.Wait()
	}()
	defer func() {
		s.cfg.Requests.ReleaseFrame(int64(c.heldFrame), int64(c.held))
		c.charge.release()
		if c.untrack != nil {
			c.untrack()
		}
	}()
	for {
		if c.sasl.raw {
			if !c.serveRawToken(ctx) {
				return
			}
			continue
		}
		hdr, body, frame, ok := c.next(ctx)
		if !ok || !c.serve(ctx, connCtx, hdr, body, frame) {
			return
		}
	}
}

func (s *Server) newConn(ctx context.Context, nc net.Conn) *serverConn {
	c := &serverConn{s: s, nc: nc, limits: s.cfg.Limits()}
	c.sr = &stallReader{conn: nc}
	c.br = bufio.NewReaderSize(c.sr, 64<<10)
	c.rc = RequestContext{Listener: s.cfg.Listener, Remote: nc.RemoteAddr().String(), Principal: AnonymousPrincipal, conn: c}
	c.logger = s.logger.With("remote", c.rc.Remote)
	c.q = newResponseQueue(c.limits, s.cfg.Responses)
	pool := s.cfg.Requests
	c.reserve = func(size, k int) error {
		c.heldFrame = size
		if pool.TryAcquire(int64(size), int64(k)) {
			return nil
		}
		// Waiting for the pool is no progress either: when requests
		// being read hold all of it, the one stalled longest gives up
		// and frees its part.
		ctx, cancel := context.WithTimeout(ctx, c.limits.ProgressTimeout)
		defer cancel()
		return pool.Acquire(ctx, int64(size), int64(k))
	}
	return c
}

// stop reports whether the connection reads no further request. A
// client's connection that the Server drains reads none; requests it
// pipelined, read or not, are not handled, and the client sends them
// again elsewhere or after a restart. Another node's connection is served
// until the Server's context ends.
func (c *serverConn) stop() bool { return !c.peer && c.s.draining.Load() }

// next reads the connection's next request; false ends the connection.
func (c *serverConn) next(ctx context.Context) (hdr Header, body, frame []byte, ok bool) {
	if c.stop() || !c.waitMuted(ctx) || c.stop() {
		return
	}
	// A client that does not take its responses is not read.
	if err := c.q.waitRoom(ctx, &c.s.paused); err != nil {
		return
	}
	if c.br.Buffered() == 0 && !c.awaitRequest(ctx) {
		return
	}
	c.sr.timeout = c.limits.ProgressTimeout
	// A request that may decode into more than the pool can hold is
	// refused before its body is read (chargeDecode).
	size, key, version, err := PeekFrame(c.br)
	if err != nil {
		if !c.stop() { // else woken by Drain while reading a request
			c.logClosed(ctx, "stalled", err)
		}
		return
	}
	if decodeTooLarge(c.s.cfg.Requests, key, version, int(size)) {
		c.logger.Info("closing connection", "api", kmsg.NameForKey(key), "version", version, "bytes", size,
			"err", fmt.Errorf("%w: may decode into %d bytes", errDecodeTooLarge, DecodeBound(key, version, int(size))))
		return
	}
	frame, c.held, err = ReadFrame(c.br, c.maxFrame(), c.frameBuf, c.reserve)
	if err != nil {
		if !c.stop() {
			c.logClosed(ctx, "stalled", err)
		}
		return
	}
	hdr, body, err = ParseHeader(frame, headerIsFlexible)
	if err != nil {
		c.logger.Debug("closing connection: bad request header", "err", err)
		return
	}
	return hdr, body, frame, true
}

// awaitRequest waits, idle, for the next request's first byte, at most
// connections.max.idle.ms; false ends the connection.
func (c *serverConn) awaitRequest(ctx context.Context) bool {
	c.sr.timeout = 0
	var deadline time.Time
	if c.limits.MaxIdle >= 0 {
		deadline = time.Now().Add(c.limits.MaxIdle)
	}
	c.nc.SetReadDeadline(deadline)
	// Drain sets draining, then wakes this read with a deadline in the
	// past: checked after arming ours, one of the two is seen.
	if c.stop() {
		return false
	}
	if _, err := c.br.Peek(1); err != nil {
		if !c.stop() {
			c.logClosed(ctx, "idle", err)
		}
		return false
	}
	return true
}

// serve handles one request and queues its answer; false ends the
// connection. Deferred answers are made under connCtx.
func (c *serverConn) serve(ctx, connCtx context.Context, hdr Header, body, frame []byte) bool {
	if hdr.ClientID != nil {
		c.rc.ClientID = *hdr.ClientID
	}
	if !c.trackPeer() {
		return false
	}
	if err := c.saslAllows(hdr.Key); err != nil {
		c.logger.Info("closing connection", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "err", err)
		if resp := c.outOfTurn(hdr); resp != nil {
			c.answer(connCtx, hdr, Reply{Response: resp, Close: true})
		}
		return false
	}
	if hdr.Key != kmsg.Produce.Int16() {
		c.deferred.Wait()
	}
	var err error
	if c.charge, err = c.s.chargeDecode(ctx, hdr, len(frame), c.limits.ProgressTimeout); err != nil {
		if !c.stop() {
			c.logger.Info("closing connection", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "bytes", len(frame), "err", err)
		}
		return false
	}
	rc := c.rc
	rc.Header = hdr
	reply, err := c.dispatch(ctx, &rc, body)
	c.s.cfg.Requests.ReleaseFrame(int64(c.heldFrame), int64(c.held))
	c.held = 0
	c.charge.release()
	c.charge = nil
	// kmsg decodes []byte fields as slices of the frame, and some
	// handlers keep them (a group member's metadata and assignment), so
	// a frame is reused only after a Produce, whose data the log copies
	// out before it answers.
	c.frameBuf = nil
	if hdr.Key == kmsg.Produce.Int16() && cap(frame) <= 4<<20 {
		c.frameBuf = frame
	}
	if err != nil {
		c.drop(reply)
		c.logger.Info("closing connection", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "err", err)
		return false
	}
	return c.answer(connCtx, hdr, reply)
}

// trackPeer puts another node's connection, known by its client id, on
// the Server's Switch: cut by Isolate, refused while it is isolated.
// false ends the connection.
func (c *serverConn) trackPeer() bool {
	if c.untrack != nil || !IsPeerClientID(c.rc.ClientID) {
		return true
	}
	untrack, err := c.s.cfg.Switch.Track(c.nc)
	if err != nil {
		c.logger.Debug("closing inter-broker connection", "client_id", c.rc.ClientID, "err", err)
		return false
	}
	c.untrack = untrack
	c.peer = true
	c.s.markPeer(c.raw)
	return true
}

// answer queues reply's answer to the request of hdr; false ends the
// connection.
func (c *serverConn) answer(connCtx context.Context, hdr Header, reply Reply) bool {
	if c.hungUp {
		c.drop(reply)
		return false // nobody to answer
	}
	c.muteFor(reply.Throttle)
	if reply.Later != nil {
		ch := make(chan *[]byte, 1)
		c.q.pushLater(ch)
		c.deferred.Add(1)
		go c.finishLater(connCtx, hdr, reply.Later, ch)
		return true
	}
	if reply.Response == nil {
		c.drop(reply)
		return true // acks=0 produce: Kafka sends nothing back
	}
	b := encodeResponse(hdr.CorrelationID, reply.Response, reply.SizeHint)
	// The response owns its bytes now: what it pointed into (a fetch's
	// read buffer) goes back before it is queued, so record data is held
	// once while the response waits.
	if reply.Release != nil {
		reply.Release()
	}
	c.q.push(b, reply.Reserved)
	return !reply.Close
}

// drop gives back what a reply that is not queued holds: its buffers and
// its part of the response budget.
func (c *serverConn) drop(reply Reply) {
	if reply.Release != nil {
		reply.Release()
	}
	c.s.cfg.Responses.Release(reply.Reserved)
}

// dispatch decodes a request body with kmsg and has the Handler serve it.
// What the body decodes into is charged to c.charge, taken before
// (chargeDecode). A panic in the Handler is logged and closes only this
// connection.
func (c *serverConn) dispatch(ctx context.Context, rc *RequestContext, body []byte) (reply Reply, err error) {
	hdr := rc.Header
	defer func() {
		if r := recover(); r != nil {
			c.logPanic(hdr, r)
			reply, err = Reply{}, fmt.Errorf("internal error handling %s", kmsg.NameForKey(hdr.Key))
		}
	}()
	if !c.s.h.Serves(hdr.Key, hdr.Version) {
		resp, err := c.s.h.Unserved(rc)
		return Reply{Response: resp}, err
	}
	rc.Start = time.Now()
	req := kmsg.RequestForKey(hdr.Key)
	req.SetVersion(hdr.Version)
	if err := req.ReadFrom(body); err != nil {
		_ = c.charge.settle(nil)
		return Reply{}, fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(hdr.Key), hdr.Version, err)
	}
	if err := c.charge.settle(req); err != nil {
		return Reply{}, err
	}
	c.noteClientSoftware(rc, req)
	return c.s.h.Handle(ctx, rc, req)
}

// noteClientSoftware keeps what a valid ApiVersions v3+ says the client
// runs, as Kafka's SocketServer registers it for the connection.
func (c *serverConn) noteClientSoftware(rc *RequestContext, req kmsg.Request) {
	av, ok := req.(*kmsg.ApiVersionsRequest)
	if !ok || av.Version < 3 || !ValidClientSoftware(av.ClientSoftwareName) || !ValidClientSoftware(av.ClientSoftwareVersion) {
		return
	}
	c.rc.ClientSoftwareName, c.rc.ClientSoftwareVersion = av.ClientSoftwareName, av.ClientSoftwareVersion
	rc.ClientSoftwareName, rc.ClientSoftwareVersion = av.ClientSoftwareName, av.ClientSoftwareVersion
}

// ValidClientSoftware reports whether s may be a client software name or
// version (KIP-511): letters, digits, '-' and '.', beginning and ending
// with a letter or digit.
func ValidClientSoftware(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !alnum(c) && ((c != '-' && c != '.') || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// finishLater makes a deferred answer (Reply.Later) and sends it on ch,
// encoded; a panic in finish closes the connection (nil on ch), as one in
// a handler does.
func (c *serverConn) finishLater(ctx context.Context, hdr Header, finish func(context.Context) kmsg.Response, ch chan<- *[]byte) {
	defer c.deferred.Done()
	var b *[]byte
	defer func() {
		if r := recover(); r != nil {
			c.logPanic(hdr, r)
			b = nil
		}
		ch <- b
	}()
	b = encodeResponse(hdr.CorrelationID, finish(ctx), 0)
}

func (c *serverConn) logPanic(hdr Header, r any) {
	c.logger.Error("handler panic", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "panic", r, "stack", string(debug.Stack()))
}

// logClosed logs why reading from a connection ended; timedOut names the
// deadline that applied (idle between requests, stalled within one).
func (c *serverConn) logClosed(ctx context.Context, timedOut string, err error) {
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || ctx.Err() != nil:
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		c.logger.Debug("closing connection: "+timedOut, "err", err)
	default:
		c.logger.Debug("closing connection", "err", err)
	}
}

// stallReader reads from a connection, arming a read deadline of timeout
// before each read when timeout is set: a started request that receives no
// byte for that long (socket.request.progress.timeout.ms) fails the read.
type stallReader struct {
	conn    net.Conn
	timeout time.Duration
}

func (r *stallReader) Read(p []byte) (int, error) {
	if r.timeout > 0 {
		r.conn.SetReadDeadline(time.Now().Add(r.timeout))
	}
	return r.conn.Read(p)
}

// headerIsFlexible reports whether a request at key/version uses request
// header v2. Unknown keys and versions parse as v1; the Handler refuses
// them (Unserved).
func headerIsFlexible(key, version int16) bool {
	req := kmsg.RequestForKey(key)
	if req == nil || version < 0 || version > req.MaxVersion() {
		return false
	}
	req.SetVersion(version)
	return req.IsFlexible()
}
