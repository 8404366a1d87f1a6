package broker

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

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/wire"
)

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
// first (fetchBudget), room the queue then takes over with the response.
// A response that makes no write progress for
// socket.request.progress.timeout.ms closes its connection, so a client
// that stops reading holds the budget that long at most.

// maxPooledBuffer is the largest response buffer kept for reuse.
const maxPooledBuffer = 16 << 20

// Accept errors (out of file descriptors, EMFILE, say) are retried after a
// pause, as net/http's Server.Serve does: minAcceptBackoff, doubling up to
// maxAcceptBackoff, and back to the start after a success.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// defaultBufSize is the capacity of a new pooled response buffer.
const defaultBufSize = 64 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, defaultBufSize); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuffer {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

func (n *Node) acceptLoop() {
	defer n.wg.Done()
	for {
		c, err := accept(n.ctx, n.ln, n.logger)
		if err != nil {
			return
		}
		n.mu.Lock()
		if n.draining.Load() || n.ctx.Err() != nil {
			n.mu.Unlock()
			c.Close()
			return
		}
		ip := remoteIP(c)
		if err := n.admitLocked(ip); err != nil {
			n.mu.Unlock()
			n.logger.Debug("closing connection at accept", "remote", c.RemoteAddr().String(), "err", err)
			c.Close()
			continue
		}
		n.mu.conns[c] = false
		n.mu.connsPerIP[ip]++
		n.mu.Unlock()
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.serveConn(c)
			n.mu.Lock()
			delete(n.mu.conns, c)
			if n.draining.Load() {
				close(n.mu.connGone)
				n.mu.connGone = make(chan struct{})
			}
			if n.mu.connsPerIP[ip]--; n.mu.connsPerIP[ip] == 0 {
				delete(n.mu.connsPerIP, ip)
			}
			n.mu.Unlock()
		}()
	}
}

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

// errTooManyConnections refuses a connection at accept: the node already
// serves max.connections, or max.connections.per.ip from its address.
var errTooManyConnections = errors.New("too many connections")

// admitLocked checks a new connection from ip against max.connections and
// max.connections.per.ip. Like Kafka's ConnectionQuotas, it refuses the
// connection from an address over its limit; for the node-wide limit,
// where Kafka's acceptor waits for a slot, klog closes the new connection
// too, so that accepting never stalls.
func (n *Node) admitLocked(ip string) error {
	s := n.broker.Load().Settings()
	if len(n.mu.conns) >= int(s.MaxConnections) {
		return fmt.Errorf("%w: max.connections is %d", errTooManyConnections, s.MaxConnections)
	}
	if n.mu.connsPerIP[ip] >= int(s.MaxConnectionsPerIP) {
		return fmt.Errorf("%w: max.connections.per.ip is %d", errTooManyConnections, s.MaxConnectionsPerIP)
	}
	return nil
}

// remoteIP is the address a connection comes from, without its port.
func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}

// clientConn is the per-connection state handlers may look at.
type clientConn struct {
	remote   string
	clientID string
	logger   *slog.Logger
	// release, when set by a handler, is called once its response has
	// been encoded: buffers the response pointed into go back to the pool.
	release func()
	// sizeHint, when set by a handler, is about the size its response
	// encodes to.
	sizeHint int
	// reserved, when set by a handler, is what it took from the node's
	// response budget for its encoded response: the response queue takes
	// it over with the response, or it is given back when the response
	// is dropped.
	reserved int64

	nc net.Conn
	br *bufio.Reader
	sr *stallReader
	// draining is the node's: set, the connection is being drained.
	draining *atomic.Bool
	// hungUp is set by untilHangup's stop when the client closed the
	// connection while its request was handled.
	hungUp bool
	// later, when set by a handler, finishes its request: the handler
	// did what must happen in the connection's order (a produce's
	// appends) and later waits for the rest (replication, fsync) while
	// the connection reads its next request. See answerLater.
	later func(ctx context.Context) kmsg.Response
}

// answerLater has the connection answer the current request with what
// finish returns, run after the handler returned and while the
// connection goes on reading; the answer is still written in the
// connection's order. Only a Produce defers (serveConn): its appends are
// done, in order, before the handler returns, and only its wait for
// the followers or for the disk overlaps the next requests, up to
// klog.max.inflight.requests.per.connection at once, as franz-go and
// librdkafka pipeline them. A request of another API waits until every
// answer deferred before it is ready, so it sees what Kafka, which
// handles a connection's requests one at a time, would show it.
// Without a connection (cc nil), finish runs now.
func (cc *clientConn) answerLater(ctx context.Context, finish func(ctx context.Context) kmsg.Response) kmsg.Response {
	if cc == nil {
		return finish(ctx)
	}
	cc.later = finish
	return nil
}

// untilHangup returns ctx, also cancelled when the client closes the
// connection while the current request is handled: a long-poll fetch
// that waits for data releases the client's resources at once instead of
// at the end of its wait. Only a handler may call it, and it must call
// stop before it returns. While a request is handled nothing else reads
// the connection, so a goroutine waits for its next byte; if that is a
// request the client pipelined, it is left for the connection to read and
// a hang-up after it goes unnoticed until the handler returns.
func (cc *clientConn) untilHangup(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	// No deadline while watching: the handler bounds its own wait, and
	// stop ends the watch with a deadline in the past; the connection's
	// loop arms its own deadlines again before it reads.
	cc.sr.timeout = 0
	cc.nc.SetReadDeadline(time.Time{})
	if cc.draining != nil && cc.draining.Load() {
		// The node drains its connections: a wait ends now, as for a
		// client gone (drainClients may have woken the read already).
		cc.nc.SetReadDeadline(time.Unix(1, 0))
	}
	var stopping atomic.Bool
	hungUp := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := cc.br.Peek(1); err != nil && !stopping.Load() {
			hungUp = true
			cancel()
		}
	}()
	return ctx, func() {
		stopping.Store(true)
		cc.nc.SetReadDeadline(time.Unix(1, 0))
		<-done
		cc.hungUp = cc.hungUp || hungUp
		cancel()
	}
}

func (n *Node) serveConn(nc net.Conn) {
	defer nc.Close()
	// peer is set once the connection is known as another node's.
	peer := false
	defer func() {
		if !peer && n.draining.Load() {
			closeGently(nc)
		}
	}()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	settings := n.broker.Load().Settings()
	sr := &stallReader{conn: nc}
	br := bufio.NewReaderSize(sr, 64<<10)
	cc := &clientConn{remote: nc.RemoteAddr().String(), nc: nc, br: br, sr: sr, draining: &n.draining}
	cc.logger = n.logger.With("remote", cc.remote)

	q := newResponseQueue(settings, n.responseBytes)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		q.write(nc, settings.RequestProgressTimeout)
	}()
	defer func() {
		close(q.out)
		<-writerDone
	}()
	// Deferred answers (answerLater) are made under connCtx: a
	// connection that ends cancels their waits, except in a drain,
	// where they finish (their own timeouts bound them) and are written.
	connCtx, cancelConn := context.WithCancel(n.ctx)
	var deferred sync.WaitGroup
	defer func() {
		if n.draining.Load() {
			deferred.Wait()
		}
		cancelConn()
		deferred.Wait()
	}()

	pool := n.requestPool
	var (
		held      int // request bytes taken from the pool
		heldFrame int // the size of the frame they were taken for
	)
	reserve := func(size, k int) error {
		heldFrame = size
		if pool.TryAcquire(int64(size), int64(k)) {
			return nil
		}
		// Waiting for the pool is no progress either: when requests
		// being read hold all of it, the one stalled longest gives up
		// and frees its part.
		ctx, cancel := context.WithTimeout(n.ctx, settings.RequestProgressTimeout)
		defer cancel()
		return pool.Acquire(ctx, int64(size), int64(k))
	}
	var charge *decodeCharge // what the request being handled decodes into
	defer func() {
		pool.ReleaseFrame(int64(heldFrame), int64(held))
		charge.release()
	}()
	var frameBuf []byte
	var untrack func() // set once the connection is known as another node's
	// A client's connection that the node drains reads no further
	// request; requests it pipelined, read or not, are not handled, and
	// the client sends them again elsewhere or after a restart. Another
	// node's connection is served until the node closes: a follower's
	// fetches move the high watermark that an acks=all produce waits for.
	stop := func() bool { return !peer && n.draining.Load() }
	for {
		if stop() {
			return
		}
		// A client that does not take its responses is not read.
		if err := q.waitRoom(n.ctx, &n.pausedConns); err != nil {
			return
		}
		if br.Buffered() == 0 {
			// Idle until the next request's first byte arrives.
			sr.timeout = 0
			var deadline time.Time
			if settings.ConnectionsMaxIdle >= 0 {
				deadline = time.Now().Add(settings.ConnectionsMaxIdle)
			}
			nc.SetReadDeadline(deadline)
			// drainClients sets draining, then wakes this read with a
			// deadline in the past: checked after arming ours, one of
			// the two is seen.
			if stop() {
				return
			}
			if _, err := br.Peek(1); err != nil {
				if stop() {
					return
				}
				n.logConnClosed(cc, "idle", err)
				return
			}
		}
		sr.timeout = settings.RequestProgressTimeout
		// A request that may decode into more than the pool can hold is
		// refused before its body is read (chargeDecode).
		size, key, version, err := wire.PeekFrame(br)
		if err != nil {
			if stop() {
				return // woken by drainClients while reading a request
			}
			n.logConnClosed(cc, "stalled", err)
			return
		}
		if decodeTooLarge(pool, key, version, int(size)) {
			cc.logger.Info("closing connection", "api", kmsg.NameForKey(key), "version", version, "bytes", size,
				"err", fmt.Errorf("%w: may decode into %d bytes", errDecodeTooLarge, wire.DecodeBound(key, version, int(size))))
			return
		}
		frame, reserved, err := wire.ReadFrame(br, n.maxRequestBytes, frameBuf, reserve)
		held = reserved
		if err != nil {
			if stop() {
				return // woken by drainClients while reading a request
			}
			n.logConnClosed(cc, "stalled", err)
			return
		}
		hdr, body, err := wire.ParseHeader(frame, headerIsFlexible)
		if err != nil {
			cc.logger.Debug("closing connection: bad request header", "err", err)
			return
		}
		if hdr.ClientID != nil {
			cc.clientID = *hdr.ClientID
		}
		if untrack == nil && wire.IsPeerClientID(cc.clientID) {
			// Another node's connection: cut by Isolate, refused
			// while the node is isolated.
			if untrack, err = n.cut.Track(nc); err != nil {
				cc.logger.Debug("closing inter-broker connection", "client_id", cc.clientID, "err", err)
				return
			}
			defer untrack()
			peer = true
			n.mu.Lock()
			if _, ok := n.mu.conns[nc]; ok {
				n.mu.conns[nc] = true
			}
			n.mu.Unlock()
		}
		if hdr.Key != kmsg.Produce.Int16() {
			deferred.Wait()
		}
		charge, err = n.chargeDecode(hdr, len(frame), settings.RequestProgressTimeout)
		if err != nil {
			if stop() {
				return
			}
			cc.logger.Info("closing connection", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "bytes", len(frame), "err", err)
			return
		}
		resp, err := n.dispatch(n.ctx, cc, hdr, body, charge)
		pool.ReleaseFrame(int64(heldFrame), int64(held))
		held = 0
		charge.release()
		charge = nil
		// kmsg decodes []byte fields as slices of the frame, and some
		// handlers keep them (a group member's metadata and assignment),
		// so a frame is reused only after a Produce, whose data the log
		// copies out before it answers.
		frameBuf = nil
		if hdr.Key == kmsg.Produce.Int16() && cap(frame) <= 4<<20 {
			frameBuf = frame
		}
		later := cc.later
		cc.later = nil
		if err != nil {
			cc.dropResponse(n.responseBytes)
			cc.logger.Info("closing connection", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "err", err)
			return
		}
		if cc.hungUp {
			cc.dropResponse(n.responseBytes)
			return // nobody to answer
		}
		if later != nil {
			ch := make(chan *[]byte, 1)
			q.pushLater(ch)
			deferred.Add(1)
			go n.finishLater(connCtx, cc, hdr, later, ch, &deferred)
			continue
		}
		if resp == nil {
			cc.dropResponse(n.responseBytes)
			continue // acks=0 produce: Kafka sends nothing back
		}
		b := encodeResponse(hdr.CorrelationID, resp, cc.sizeHint)
		cc.sizeHint = 0
		// The response owns its bytes now: what it pointed into (a
		// fetch's read buffer) goes back before it is queued, so record
		// data is held once while the response waits.
		if cc.release != nil {
			cc.release()
			cc.release = nil
		}
		q.push(b, cc.reserved)
		cc.reserved = 0
	}
}

// errDecodeTooLarge closes a connection whose request would decode into
// more than the request pool (queued.max.request.bytes) can ever hold, as
// a frame larger than socket.request.max.bytes closes it.
var errDecodeTooLarge = errors.New("request would decode into more than queued.max.request.bytes")

// decodeCharge is what a request holds of the request pool
// (queued.max.request.bytes) for what its body decodes into, on top of
// its frame: the most it may decode into (wire.DecodeBound), from before
// it is decoded until it was handled, so that many small elements cannot
// turn a request the pool admitted into many times its bytes. The
// handler's own work on the elements (the sets it dedupes them into, its
// response) is counted nowhere else, and the bound, made for elements that
// carry nothing, is several times what a request of such elements decodes
// into: holding the bound while the handler runs leaves room for that
// work too. A large Produce keeps only what it did decode into
// (wire.DecodedSize, settle): its records are not elements.
//
// A request whose bound the pool can never hold is not decoded: its
// connection closes (errDecodeTooLarge). A Produce is the exception,
// since its bulk is record data that decodes into nothing (the decoded
// request points into the frame), and the bound, made for elements that
// carry nothing, is far above what a Produce of real records decodes
// into: such a Produce decodes alone (wire.Pool.TakeAlone), holding its
// bound past the pool's limit, one at a time, and then only what it
// decoded into; one that decoded into more than the pool is not handled
// (settle). So the node holds at most the pool, its headroom and the
// bound of one Produce, the last only while it is decoded.
type decodeCharge struct {
	pool    *wire.Pool
	class   int64 // the size its bytes are counted under, small or large
	held    int64
	produce bool // settled once decoded
	alone   bool // taken with TakeAlone, not yet settled
}

// decodeTooLarge reports whether a request of key at version in a frame
// of frameLen bytes may decode into more than pool can ever grant it.
func decodeTooLarge(pool *wire.Pool, key, version int16, frameLen int) bool {
	if key == kmsg.Produce.Int16() {
		return false
	}
	return !decodeFits(pool, wire.DecodeBound(key, version, frameLen), frameLen)
}

// decodeFits reports whether pool can ever grant need bytes to a request
// that holds a frame of frameLen bytes: both within the limit, and the
// headroom too for a small frame.
func decodeFits(pool *wire.Pool, need int64, frameLen int) bool {
	limit := pool.Limit()
	if frameLen <= wire.SmallFrameBytes {
		limit += pool.Headroom()
	}
	return int64(frameLen)+need <= limit
}

// chargeDecode takes from the request pool what a request of hdr in a
// frame of frameLen bytes may decode into, counted in the class of its
// frame (wire.Pool), waiting for it at most timeout. The frame's header
// is counted as if it were body: a few bytes more.
func (n *Node) chargeDecode(hdr wire.Header, frameLen int, timeout time.Duration) (*decodeCharge, error) {
	need := wire.DecodeBound(hdr.Key, hdr.Version, frameLen)
	c := &decodeCharge{pool: n.requestPool, class: int64(frameLen), produce: hdr.Key == kmsg.Produce.Int16()}
	if need == 0 {
		return c, nil
	}
	fits := decodeFits(c.pool, need, frameLen)
	if fits && c.pool.TryAcquire(c.class, need) {
		c.held = need
		return c, nil
	}
	ctx, cancel := context.WithTimeout(n.ctx, timeout)
	defer cancel()
	switch {
	case fits:
		if err := c.pool.Acquire(ctx, c.class, need); err != nil {
			return nil, fmt.Errorf("waiting for %d bytes of the request pool to decode: %w", need, err)
		}
	case c.produce:
		took, err := c.pool.TakeAlone(ctx, need)
		if err != nil {
			return nil, fmt.Errorf("waiting to decode a produce of %d bytes: %w", frameLen, err)
		}
		c.alone = true
		c.class = wire.SmallFrameBytes + 1 // counted as large
		c.held = took
		return c, nil
	default:
		return nil, fmt.Errorf("%w: %d bytes may decode into %d", errDecodeTooLarge, frameLen, need)
	}
	c.held = need
	return c, nil
}

// settle charges what a Produce, req, decoded into in place of its bound;
// req is nil when decoding failed. Walking a request costs about as much
// as decoding it, so only a large charge is settled. A Produce that did
// decode into more than the whole pool is made of elements, not records
// (Kafka 4.4 refuses a collection of more than 1,000,000 of them): it is
// not handled, and settle returns errDecodeTooLarge.
func (c *decodeCharge) settle(req kmsg.Request) error {
	if !c.produce || !c.alone && c.held <= wire.SmallFrameBytes {
		return nil
	}
	var decoded int64
	if req != nil {
		decoded = wire.DecodedSize(req)
	}
	var err error
	if decoded > c.pool.Limit() {
		err = fmt.Errorf("%w: a produce decoded into %d bytes", errDecodeTooLarge, decoded)
		decoded = 0 // dropped now
	}
	switch {
	case decoded < c.held:
		c.pool.ReleaseFrame(c.class, c.held-decoded)
		c.held = decoded
	case decoded > c.held && c.alone:
		// What TakeAlone left uncounted and the Produce keeps while it
		// is handled: at most the pool's limit.
		c.pool.Take(decoded - c.held)
		c.held = decoded
	}
	if c.alone {
		c.alone = false
		c.pool.DoneAlone()
	}
	return err
}

// release gives back what c holds; c may be nil.
func (c *decodeCharge) release() {
	if c == nil {
		return
	}
	c.pool.ReleaseFrame(c.class, c.held)
	c.held = 0
	if c.alone {
		c.alone = false
		c.pool.DoneAlone()
	}
}

// dropResponse gives back what the handler held for a response that is
// not queued: its buffers and its part of the response budget.
func (cc *clientConn) dropResponse(budget *wire.Pool) {
	if cc.release != nil {
		cc.release()
		cc.release = nil
	}
	budget.Release(cc.reserved)
	cc.reserved = 0
}

// drainTimeout bounds how long Close waits for client connections to
// finish their requests and write their answers.
const drainTimeout = 2 * time.Second

// lingerTimeout bounds how long a drained connection reads what its client
// still sends after the node's last answer, and lingerBytes how much.
const (
	lingerTimeout = 500 * time.Millisecond
	lingerBytes   = 16 << 20
)

// drainClients stops every client connection reading requests and waits,
// for at most timeout, until each has ended: the request it was handling
// answered and every answer written. A produce the log appended is
// acknowledged, so the client does not send it again after a restart,
// when only the last batch of each producer is known to deduplicate it
// (the producer snapshot keeps one). A fetch waiting for data, which
// changes nothing, ends at once as for a client gone; another node's
// connection is left to Close.
func (n *Node) drainClients(timeout time.Duration) {
	n.draining.Store(true)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	woken := false
	for {
		n.mu.Lock()
		clients := 0
		for c, peer := range n.mu.conns {
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
		gone := n.mu.connGone
		n.mu.Unlock()
		woken = true
		if clients == 0 {
			return
		}
		select {
		case <-gone:
		case <-deadline.C:
			n.logger.Info("closing connections still busy after the drain", "connections", clients, "after", timeout)
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
	tc, ok := nc.(*net.TCPConn)
	if !ok || tc.CloseWrite() != nil {
		return
	}
	tc.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.Copy(io.Discard, io.LimitReader(tc, lingerBytes))
}

// encodeResponse encodes resp as a frame into a pooled buffer, or into
// one allocated once at sizeHint when that is larger: a large response
// is not copied again and again as it grows, each copy left to the
// garbage collector.
//
// A pooled buffer more than twice sizeHint is not used either: it would be
// held, and counted against the queue's bounds, in full while the response
// waits. So a response with a hint never holds more than twice its size.
func encodeResponse(correlationID int32, resp kmsg.Response, sizeHint int) *[]byte {
	b := getBuf()
	switch {
	case sizeHint > cap(*b):
		*b = make([]byte, 0, sizeHint)
	case sizeHint > 0 && cap(*b) > 2*sizeHint && cap(*b) > defaultBufSize:
		putBuf(b)
		fresh := make([]byte, 0, sizeHint)
		b = &fresh
	}
	*b = wire.AppendResponse(*b, correlationID, resp)
	return b
}

// responseQueue holds a connection's encoded responses, in order, until
// its writer has written them, and counts what they hold: for the
// connection (number and bytes) and, in node, for all connections.
type responseQueue struct {
	out      chan queuedResponse // to the writer; never full, see push
	node     *wire.Pool          // klog.queued.max.response.bytes
	maxCount int                 // klog.max.inflight.requests.per.connection
	maxBytes int64               // klog.queued.max.response.bytes.per.connection

	mu struct {
		sync.Mutex
		count int   // responses queued or being written
		bytes int64 // the capacity of their buffers
		// written is closed, and replaced, when a response was written.
		written chan struct{}
	}
}

func newResponseQueue(s *config.Settings, node *wire.Pool) *responseQueue {
	q := &responseQueue{
		out:      make(chan queuedResponse, s.MaxInflightRequests),
		node:     node,
		maxCount: int(s.MaxInflightRequests),
		maxBytes: s.QueuedMaxResponseBytesPerConnection,
	}
	q.mu.written = make(chan struct{})
	return q
}

// waitRoom returns once the connection may read its next request: it has
// nothing unwritten, or it is within its bounds and the node within
// klog.queued.max.response.bytes. paused counts the connections waiting here.
func (q *responseQueue) waitRoom(ctx context.Context, paused *atomic.Int64) error {
	counted := false
	defer func() {
		if counted {
			paused.Add(-1)
		}
	}()
	for {
		q.mu.Lock()
		count, bytes, written := q.mu.count, q.mu.bytes, q.mu.written
		q.mu.Unlock()
		if count == 0 {
			return nil
		}
		var freed <-chan struct{}
		if count < q.maxCount && bytes < q.maxBytes {
			over, f := q.node.Over()
			if !over {
				return nil
			}
			freed = f
		}
		if !counted {
			counted = true
			paused.Add(1)
		}
		select {
		case <-written:
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// push queues b for the writer, counting the capacity of its buffer in
// the node's response budget, of which the handler took reserved bytes
// already. It never blocks: waitRoom let the connection read the request
// only with fewer than maxCount responses unwritten, the capacity of out.
func (q *responseQueue) push(b *[]byte, reserved int64) {
	q.mu.Lock()
	q.mu.count++
	q.mu.Unlock()
	q.take(b, reserved)
	q.out <- queuedResponse{b: b}
}

// pushLater queues the place of a response that is sent on later once
// it is encoded (nil: none, the connection closes), counted as a
// response from now on; its bytes are counted when the writer takes it.
func (q *responseQueue) pushLater(later <-chan *[]byte) {
	q.mu.Lock()
	q.mu.count++
	q.mu.Unlock()
	q.out <- queuedResponse{later: later}
}

// take counts b's buffer in the queue's bytes and the node's budget.
func (q *responseQueue) take(b *[]byte, reserved int64) {
	n := int64(cap(*b))
	q.mu.Lock()
	q.mu.bytes += n
	q.mu.Unlock()
	if n > reserved {
		q.node.Take(n - reserved)
	} else {
		q.node.Release(reserved - n)
	}
}

// queuedResponse is an encoded response, or the place of one still
// being made (answerLater).
type queuedResponse struct {
	b     *[]byte
	later <-chan *[]byte
}

// write writes the queued responses to nc until out is closed. A write
// that makes no progress for stall (socket.request.progress.timeout.ms;
// zero or negative: never) fails, like any write error, closing nc, which
// ends the connection's reading too; the responses queued after it are
// dropped, so a client that stops reading holds the response budget for
// that long at most.
func (q *responseQueue) write(nc net.Conn, stall time.Duration) {
	if stall <= 0 {
		stall = -1
	}
	failed := false
	for r := range q.out {
		b := r.b
		if r.later != nil {
			if b = <-r.later; b != nil {
				q.take(b, 0)
			} else if !failed {
				// The deferred answer was not made: without it the
				// ones after it would answer the wrong requests.
				failed = true
				nc.Close()
			}
		}
		var n int64
		if b != nil {
			if !failed {
				if err := writeProgressing(nc, *b, stall); err != nil {
					failed = true
					nc.Close()
				}
			}
			n = int64(cap(*b))
			putBuf(b)
		}
		q.mu.Lock()
		q.mu.count--
		q.mu.bytes -= n
		close(q.mu.written)
		q.mu.written = make(chan struct{})
		q.mu.Unlock()
		q.node.Release(n)
	}
}

// writeProgressing writes b to nc, failing when a write moves no byte for
// timeout (negative: no limit).
func writeProgressing(nc net.Conn, b []byte, timeout time.Duration) error {
	for {
		if timeout >= 0 {
			nc.SetWriteDeadline(time.Now().Add(timeout))
		}
		n, err := nc.Write(b)
		b = b[n:]
		if err == nil || n == 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
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

// logConnClosed logs why reading from a connection ended; timedOut names
// the deadline that applied (idle between requests, stalled within one).
func (n *Node) logConnClosed(cc *clientConn, timedOut string, err error) {
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || n.ctx.Err() != nil:
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		cc.logger.Debug("closing connection: "+timedOut, "err", err)
	default:
		cc.logger.Debug("closing connection", "err", err)
	}
}

// headerIsFlexible reports whether a request at key/version uses request
// header v2. Unknown keys and versions parse as v1; dispatch rejects them.
func headerIsFlexible(key, version int16) bool {
	req := kmsg.RequestForKey(key)
	if req == nil || version < 0 || version > req.MaxVersion() {
		return false
	}
	req.SetVersion(version)
	return req.IsFlexible()
}

// errUnsupported closes the connection: Kafka disconnects clients that send
// an API key or version it does not serve (other than ApiVersions, which
// gets an answer in version 0).
var errUnsupported = errors.New("unsupported API key or version")

// dispatch decodes a request body with kmsg, runs its handler and returns
// the response; a nil response means "send nothing". An error closes the
// connection. What the body decodes into is charged to charge, taken
// before (chargeDecode). A panic in a handler is logged and closes only this
// connection. Every request decoded is timed here, from its decoding to
// its handler's return (nodeStats.requestDone).
func (n *Node) dispatch(ctx context.Context, cc *clientConn, hdr wire.Header, body []byte, charge *decodeCharge) (resp kmsg.Response, err error) {
	defer func() {
		if r := recover(); r != nil {
			cc.logger.Error("handler panic", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "panic", r, "stack", string(debug.Stack()))
			resp, err = nil, fmt.Errorf("internal error handling %s", kmsg.NameForKey(hdr.Key))
		}
	}()
	api, ok := lookupAPI(hdr.Key)
	if !ok || hdr.Version < api.min || hdr.Version > api.max {
		if hdr.Key == kmsg.ApiVersions.Int16() {
			return n.apiVersionsUnsupported(), nil
		}
		return nil, fmt.Errorf("%w: key %d version %d", errUnsupported, hdr.Key, hdr.Version)
	}
	start := time.Now()
	req := kmsg.RequestForKey(hdr.Key)
	req.SetVersion(hdr.Version)
	if err := req.ReadFrom(body); err != nil {
		_ = charge.settle(nil)
		return nil, fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(hdr.Key), hdr.Version, err)
	}
	if err := charge.settle(req); err != nil {
		return nil, err
	}
	defer func() {
		later := cc.later
		if later == nil {
			n.stats.requestDone(hdr.Key, req, time.Since(start))
			return
		}
		// A deferred answer is timed to its end.
		cc.later = func(ctx context.Context) kmsg.Response {
			defer func() { n.stats.requestDone(hdr.Key, req, time.Since(start)) }()
			return later(ctx)
		}
	}()
	if hook := n.cfg.RequestHook; hook != nil {
		if resp, handled, err := hook(ctx, req); handled {
			return resp, err
		}
	}
	return api.handle(n, ctx, cc, req)
}

// finishLater makes a deferred answer (answerLater) and sends it on ch,
// encoded; a panic in finish closes the connection (nil on ch), as one in
// a handler does.
func (n *Node) finishLater(ctx context.Context, cc *clientConn, hdr wire.Header, finish func(context.Context) kmsg.Response, ch chan<- *[]byte, wg *sync.WaitGroup) {
	defer wg.Done()
	var b *[]byte
	defer func() {
		if r := recover(); r != nil {
			cc.logger.Error("handler panic", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "panic", r, "stack", string(debug.Stack()))
			b = nil
		}
		ch <- b
	}()
	b = encodeResponse(hdr.CorrelationID, finish(ctx), 0)
}
