package wire

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A listener's security, server side: TLS (ServerConfig.TLS) wraps each
// connection before its first byte is read, and a SASL listener
// (ServerConfig.SASL) lets a connection that has not authenticated send
// only what Kafka's SaslServerAuthenticator takes before authentication:
// ApiVersions and SaslHandshake, then, once a handshake chose a
// mechanism, SaslAuthenticate. Any other request closes it: unanswered
// before a handshake, answered ILLEGAL_SASL_STATE after one (outOfTurn).
// The handlers of SaslHandshake and SaslAuthenticate drive the exchange
// through the RequestContext (BeginSASL, SASLSession, SASLDone); this
// package knows neither mechanisms nor credentials.
//
// A SaslHandshake v0 is followed by the mechanism's tokens as bare
// frames (a 4-byte size, then the token), not SaslAuthenticate requests:
// each is handed to the Handler as a SaslAuthenticate v0 and answered
// with its token, bare too, and a failure closes the connection.
//
// An authentication whose session lapses (SASLDone's expiry, from
// connections.max.reauth.ms and the credential, KIP-368) closes the
// connection at its next request, unless that is a SaslHandshake that
// authenticates it again, as Kafka's SocketServer does.

// saslMaxReceive bounds a frame of a SASL connection that has not
// authenticated, as Kafka's sasl.server.max.receive.size does by
// default: a client that has not authenticated makes the node read no
// more than this.
const saslMaxReceive = 524288

// defaultHandshakeTimeout bounds a TLS handshake when the Server's limits
// set no progress timeout.
const defaultHandshakeTimeout = 10 * time.Second

// errSASLState is a request a SASL listener does not take before the
// connection authenticated.
var errSASLState = errors.New("request not allowed before SASL authentication")

// errSessionExpired is a request after the connection's SASL session
// lapsed.
var errSessionExpired = errors.New("SASL session expired without re-authentication")

// saslState is a connection's authentication on a SASL listener.
type saslState struct {
	// session is what the handler's SaslHandshake began, until
	// SASLDone; raw reports a SaslHandshake v0: bare tokens follow.
	session any
	raw     bool
	// authenticated is set by SASLDone; the principal is then rc's, and
	// done the session that authenticated it.
	authenticated bool
	done          any
	// expiry is when the authentication lapses; zero: never.
	expiry time.Time
}

// handshakeTLS makes nc a TLS connection, the handshake bounded by
// timeout (socket.request.progress.timeout.ms), and returns it with the
// principal of its client certificate (ServerConfig.TLSPrincipal).
func (s *Server) handshakeTLS(ctx context.Context, nc net.Conn, timeout time.Duration) (net.Conn, string, error) {
	if timeout <= 0 {
		timeout = defaultHandshakeTimeout
	}
	tc := tls.Server(&recordBatcher{Conn: nc}, s.cfg.TLS)
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		return nil, "", fmt.Errorf("TLS handshake: %w", err)
	}
	principal := AnonymousPrincipal
	if s.cfg.TLSPrincipal != nil {
		p, err := s.cfg.TLSPrincipal(tc.ConnectionState())
		if err != nil {
			return nil, "", &principalError{err: err, subject: peerSubject(tc.ConnectionState())}
		}
		principal = p
	}
	return tc, principal, nil
}

// saslAllows reports whether the connection may send a request of key
// now; false closes it.
func (c *serverConn) saslAllows(key int16) error {
	if !c.s.cfg.SASL {
		return nil
	}
	st := &c.sasl
	if st.authenticated && st.session != nil {
		// Re-authenticating: the exchange alone, as before the first.
		if key == kmsg.SASLAuthenticate.Int16() || key == kmsg.SASLHandshake.Int16() {
			return nil
		}
		return errSASLState
	}
	if st.authenticated {
		if !st.expiry.IsZero() && time.Now().After(st.expiry) && key != kmsg.SASLHandshake.Int16() {
			return errSessionExpired
		}
		return nil
	}
	switch key {
	case kmsg.ApiVersions.Int16():
		if st.session == nil {
			return nil
		}
	case kmsg.SASLHandshake.Int16():
		return nil // a second one is answered ILLEGAL_SASL_STATE by its handler
	case kmsg.SASLAuthenticate.Int16():
		if st.session != nil {
			return nil
		}
	}
	return errSASLState
}

// outOfTurn is the answer to a request other than SaslAuthenticate in
// the middle of a SASL exchange (after a SaslHandshake v1): the request's
// response with ILLEGAL_SASL_STATE as its error code where it has one at
// the top, sent before the connection closes, as Kafka's
// SaslServerAuthenticator answers it. nil elsewhere: before a handshake
// and with v0's bare tokens Kafka closes without an answer.
func (c *serverConn) outOfTurn(hdr Header) kmsg.Response {
	st := &c.sasl
	if st.session == nil || st.raw || st.authenticated {
		return nil
	}
	req := kmsg.RequestForKey(hdr.Key)
	if req == nil || hdr.Version < 0 || hdr.Version > req.MaxVersion() {
		return nil
	}
	resp := req.ResponseKind()
	resp.SetVersion(hdr.Version)
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 {
		f.SetInt(int64(kerr.IllegalSaslState.Code))
	}
	return resp
}

// maxFrame is the largest request the connection may send now.
func (c *serverConn) maxFrame() int32 {
	if c.s.cfg.SASL && !c.sasl.authenticated {
		return min(c.s.cfg.MaxRequestBytes, saslMaxReceive)
	}
	return c.s.cfg.MaxRequestBytes
}

// SASL reports whether the request's listener authenticates its
// connections with SASL.
func (rc *RequestContext) SASL() bool { return rc.conn != nil && rc.conn.s.cfg.SASL }

// SASLAuthenticated reports whether the connection authenticated with
// SASL (SASLDone).
func (rc *RequestContext) SASLAuthenticated() bool {
	return rc.SASL() && rc.conn.sasl.authenticated
}

// SASLSession is what the connection's SaslHandshake began (BeginSASL),
// nil when no authentication is under way.
func (rc *RequestContext) SASLSession() any {
	if !rc.SASL() {
		return nil
	}
	return rc.conn.sasl.session
}

// SASLCompleted is the session of the connection's last completed
// authentication (SASLDone), nil before one.
func (rc *RequestContext) SASLCompleted() any {
	if !rc.SASL() {
		return nil
	}
	return rc.conn.sasl.done
}

// BeginSASL starts an authentication of the connection, as the handler
// of its SaslHandshake chose: session is what the handler of
// SaslAuthenticate continues (SASLSession); raw, for a SaslHandshake v0,
// has the connection read the tokens that follow as bare frames.
func (rc *RequestContext) BeginSASL(session any, raw bool) {
	if rc.SASL() {
		rc.conn.sasl.session, rc.conn.sasl.raw = session, raw
	}
}

// SASLDone ends the connection's authentication: principal is who it is
// for every later request, until expiry (zero: for good), when a request
// other than a SaslHandshake closes it.
func (rc *RequestContext) SASLDone(principal string, expiry time.Time) {
	if !rc.SASL() {
		return
	}
	st := &rc.conn.sasl
	st.done, st.session, st.raw = st.session, nil, false
	st.authenticated, st.expiry = true, expiry
	rc.conn.rc.Principal = principal
	rc.Principal = principal
}

// serveRawToken reads one bare SASL token (after a SaslHandshake v0),
// has the Handler answer it as a SaslAuthenticate v0 and writes its
// answer as a bare token; false ends the connection.
func (c *serverConn) serveRawToken(ctx context.Context) bool {
	if c.stop() || c.q.waitRoom(ctx, &c.s.paused) != nil || !c.awaitRequest(ctx) {
		return false
	}
	c.sr.timeout = c.limits.ProgressTimeout
	token, err := c.readToken()
	defer func() {
		c.s.cfg.Requests.ReleaseFrame(int64(c.heldFrame), int64(c.held))
		c.held = 0
	}()
	if err != nil {
		c.logClosed(ctx, "stalled", err)
		return false
	}
	rc := c.rc
	rc.Header = Header{Key: kmsg.SASLAuthenticate.Int16()}
	rc.Start = time.Now()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SASLAuthBytes = token
	reply, err := c.handleRaw(ctx, &rc, req)
	if err != nil {
		c.logger.Info("closing connection", "api", "SASL token", "err", err)
		return false
	}
	resp, ok := reply.Response.(*kmsg.SASLAuthenticateResponse)
	if !ok || resp.ErrorCode != 0 || reply.Close {
		return false
	}
	b := GetBuffer()
	*b = appendSizePrefixed(*b, resp.SASLAuthBytes)
	c.q.push(b, 0)
	return true
}

// readToken reads a bare token: its 4-byte size, at most maxFrame, then
// its bytes, taken from the request pool first.
func (c *serverConn) readToken() ([]byte, error) {
	var sizeBuf [4]byte
	if _, err := io.ReadFull(c.br, sizeBuf[:]); err != nil {
		return nil, err
	}
	size := int(int32(binary.BigEndian.Uint32(sizeBuf[:])))
	if size < 0 || size > int(c.maxFrame()) {
		return nil, fmt.Errorf("%w: SASL token of %d bytes", ErrFrameTooLarge, size)
	}
	if err := c.reserve(size, size); err != nil {
		return nil, err
	}
	c.held = size
	token := make([]byte, size)
	if _, err := io.ReadFull(c.br, token); err != nil {
		return nil, err
	}
	return token, nil
}

// handleRaw has the Handler serve a bare token, a panic closing the
// connection as in dispatch.
func (c *serverConn) handleRaw(ctx context.Context, rc *RequestContext, req kmsg.Request) (reply Reply, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.logPanic(rc.Header, r)
			reply, err = Reply{}, errors.New("internal error handling a SASL token")
		}
	}()
	reply, err = c.s.h.Handle(ctx, rc, req)
	c.drop(Reply{Release: reply.Release, Reserved: reply.Reserved})
	return reply, err
}

// appendSizePrefixed appends b with its 4-byte size before it.
func appendSizePrefixed(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}
