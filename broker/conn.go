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
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// Connections process requests one at a time, in order, as Kafka does: the
// next request is read only after the previous one was handled. Responses
// are written by a second goroutine so that writing a large fetch response
// overlaps with reading and handling the next request.

// maxQueuedResponses bounds the responses waiting to be written per
// connection.
const maxQueuedResponses = 4

// maxPooledBuffer is the largest response buffer kept for reuse.
const maxPooledBuffer = 16 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

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
		c, err := n.ln.Accept()
		if err != nil {
			if n.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			n.logger.Warn("accept", "err", err)
			continue
		}
		n.mu.Lock()
		if n.ctx.Err() != nil {
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
		n.mu.conns[c] = struct{}{}
		n.mu.connsPerIP[ip]++
		n.mu.Unlock()
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.serveConn(c)
			n.mu.Lock()
			delete(n.mu.conns, c)
			if n.mu.connsPerIP[ip]--; n.mu.connsPerIP[ip] == 0 {
				delete(n.mu.connsPerIP, ip)
			}
			n.mu.Unlock()
		}()
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
}

func (n *Node) serveConn(nc net.Conn) {
	defer nc.Close()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	cc := &clientConn{remote: nc.RemoteAddr().String()}
	cc.logger = n.logger.With("remote", cc.remote)

	out := make(chan *[]byte, maxQueuedResponses)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		failed := false
		for b := range out {
			if !failed {
				if _, err := nc.Write(*b); err != nil {
					failed = true
					nc.Close() // unblocks the reader
				}
			}
			putBuf(b)
		}
	}()
	defer func() {
		close(out)
		<-writerDone
	}()

	settings := n.broker.Load().Settings()
	sr := &stallReader{conn: nc}
	br := bufio.NewReaderSize(sr, 64<<10)
	pool := n.requestPool
	reserve := func(k int) error {
		if pool.TryAcquire(int64(k)) {
			return nil
		}
		// Waiting for the pool is no progress either: when requests
		// being read hold all of it, the one stalled longest gives up
		// and frees its part.
		ctx, cancel := context.WithTimeout(n.ctx, settings.RequestProgressTimeout)
		defer cancel()
		return pool.Acquire(ctx, int64(k))
	}
	var held int // request bytes taken from the pool
	defer func() { pool.Release(int64(held)) }()
	var frameBuf []byte
	for {
		if br.Buffered() == 0 {
			// Idle until the next request's first byte arrives.
			sr.timeout = 0
			var deadline time.Time
			if settings.ConnectionsMaxIdle >= 0 {
				deadline = time.Now().Add(settings.ConnectionsMaxIdle)
			}
			nc.SetReadDeadline(deadline)
			if _, err := br.Peek(1); err != nil {
				n.logConnClosed(cc, "idle", err)
				return
			}
		}
		sr.timeout = settings.RequestProgressTimeout
		frame, reserved, err := wire.ReadFrame(br, n.maxRequestBytes, frameBuf, reserve)
		held = reserved
		if err != nil {
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
		resp, err := n.dispatch(n.ctx, cc, hdr, body)
		pool.Release(int64(held))
		held = 0
		// kmsg decodes []byte fields as slices of the frame, and some
		// handlers keep them (a group member's metadata and assignment),
		// so a frame is reused only after a Produce, whose data the log
		// copies out before it answers.
		frameBuf = nil
		if hdr.Key == kmsg.Produce.Int16() && cap(frame) <= 4<<20 {
			frameBuf = frame
		}
		if err != nil {
			cc.logger.Info("closing connection", "api", kmsg.NameForKey(hdr.Key), "version", hdr.Version, "err", err)
			return
		}
		if resp == nil {
			if cc.release != nil {
				cc.release()
				cc.release = nil
			}
			continue // acks=0 produce: Kafka sends nothing back
		}
		b := getBuf()
		*b = wire.AppendResponse(*b, hdr.CorrelationID, resp)
		if cc.release != nil {
			cc.release()
			cc.release = nil
		}
		select {
		case out <- b:
		case <-n.ctx.Done():
			putBuf(b)
			return
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
// connection. A panic in a handler is logged and closes only this
// connection.
func (n *Node) dispatch(ctx context.Context, cc *clientConn, hdr wire.Header, body []byte) (resp kmsg.Response, err error) {
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
	req := kmsg.RequestForKey(hdr.Key)
	req.SetVersion(hdr.Version)
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(hdr.Key), hdr.Version, err)
	}
	return api.handle(n, ctx, cc, req)
}
