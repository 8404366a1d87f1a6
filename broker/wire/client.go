package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// The client side, for the requests one node sends another's Kafka
// listener: the partition followers' Fetch and OffsetForLeaderEpoch
// (broker/replica) and the coordinators' WriteTxnMarkers and
// AddPartitionsToTxn (broker/peers.go). kmsg encodes requests and decodes
// responses; only the frame and the response header are read here.

// ErrBadResponse is a response frame whose header does not match its
// request (its correlation id) or cannot be parsed. The connection must be
// closed.
var ErrBadResponse = errors.New("wire: malformed response frame")

// peerClientIDPrefix starts the client id of every request a klog node
// sends another; the listener tells inter-broker connections from
// clients' by it (see IsPeerClientID).
const peerClientIDPrefix = "klog-broker-"

// PeerClientID is the client id node id's requests to other nodes carry.
func PeerClientID(id int32) string { return peerClientIDPrefix + strconv.Itoa(int(id)) }

// IsPeerClientID reports whether a request's client id is another klog
// node's (PeerClientID).
func IsPeerClientID(clientID string) bool { return strings.HasPrefix(clientID, peerClientIDPrefix) }

// DialConfig configures the connections Dial makes.
type DialConfig struct {
	// ClientID is sent in every request header.
	ClientID string
	// Timeout bounds the dial.
	Timeout time.Duration
	// MaxFrame bounds a response frame, in bytes.
	MaxFrame int32
	// Switch, if set, tracks the connection: its Isolate closes it, and
	// Dial fails while it is isolated.
	Switch *Switch
	// TLS, when set, returns the TLS client config of a new connection:
	// the inter-broker listener is SSL or SASL_SSL.
	TLS func() (*tls.Config, error)
	// SASL, when set, authenticates a new connection with the mechanism
	// (SaslHandshake v1, then SaslAuthenticate until the mechanism is
	// done): the inter-broker listener is SASL_PLAINTEXT or SASL_SSL.
	SASL sasl.Mechanism
}

// Conn is one client connection to a node's Kafka listener, for one
// caller at a time: one request in flight, each exchange bounded by a
// deadline and each response by MaxFrame.
type Conn struct {
	nc       net.Conn
	rd       *bufio.Reader
	f        *kmsg.RequestFormatter
	maxFrame int32
	corr     int32
	buf      []byte // the last request's encoding, reused
	resp     []byte // DoReused's last response frame, reused
	untrack  func()
}

// Dial connects to the Kafka listener at addr. A cancelled ctx ends the
// dial.
func Dial(ctx context.Context, addr string, cfg DialConfig) (*Conn, error) {
	if cfg.Switch.Isolated() {
		return nil, fmt.Errorf("dial %s: %w", addr, ErrIsolated)
	}
	d := net.Dialer{Timeout: cfg.Timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	untrack, err := cfg.Switch.Track(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if cfg.TLS != nil {
		if nc, err = dialTLS(ctx, nc, addr, cfg); err != nil {
			untrack()
			return nil, err
		}
	}
	c := &Conn{nc: nc, rd: bufio.NewReader(nc), f: kmsg.NewRequestFormatter(kmsg.FormatterClientID(cfg.ClientID)),
		maxFrame: cfg.MaxFrame, untrack: untrack}
	if cfg.SASL != nil {
		if err := c.authenticate(ctx, addr, cfg.SASL, cfg.Timeout); err != nil {
			c.Close()
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
	}
	return c, nil
}

// dialTLS makes nc a TLS connection to addr, the handshake bounded by
// cfg.Timeout. On error nc is closed.
func dialTLS(ctx context.Context, nc net.Conn, addr string, cfg DialConfig) (net.Conn, error) {
	tcfg, err := cfg.TLS()
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if tcfg.ServerName == "" && !tcfg.InsecureSkipVerify {
		tcfg = tcfg.Clone()
		tcfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(nc, tcfg)
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("dial %s: TLS handshake: %w", addr, err)
	}
	return tc, nil
}

// authenticate runs mech's exchange on a new connection, as a Kafka
// client does: SaslHandshake v1, then SaslAuthenticate v1 with each
// token until the mechanism is done.
func (c *Conn) authenticate(ctx context.Context, addr string, mech sasl.Mechanism, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, mech.Name()
	resp, err := c.Do(ctx, hs, timeout)
	if err != nil {
		return err
	}
	if err := kerrCode(resp.(*kmsg.SASLHandshakeResponse).ErrorCode, nil); err != nil {
		return fmt.Errorf("SASL handshake for %s: %w", mech.Name(), err)
	}
	host, _, _ := net.SplitHostPort(addr)
	session, token, err := mech.Authenticate(ctx, host)
	if err != nil {
		return err
	}
	for {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 1, token
		resp, err := c.Do(ctx, req, timeout)
		if err != nil {
			return err
		}
		ar := resp.(*kmsg.SASLAuthenticateResponse)
		if err := kerrCode(ar.ErrorCode, ar.ErrorMessage); err != nil {
			return fmt.Errorf("SASL %s: %w", mech.Name(), err)
		}
		done, next, err := session.Challenge(ar.SASLAuthBytes)
		if err != nil {
			return fmt.Errorf("SASL %s: %w", mech.Name(), err)
		}
		if done {
			return nil
		}
		token = next
	}
}

// kerrCode is a Kafka error code as an error, nil for none.
func kerrCode(code int16, msg *string) error {
	if code == 0 {
		return nil
	}
	err := kerr.ErrorForCode(code)
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.untrack()
	return c.nc.Close()
}

// Do sends req, whose version must be set, and reads its response, within
// timeout or by ctx's deadline if that is sooner; a cancelled ctx ends the
// exchange at once. Any error leaves the connection unusable: the caller
// closes it.
func (c *Conn) Do(ctx context.Context, req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	return c.do(ctx, req, timeout, false)
}

// maxReusedFrame bounds the response buffer a Conn keeps for DoReused.
const maxReusedFrame = 16 << 20

// DoReused is Do reading the response into a buffer the connection keeps
// for its next DoReused: the byte slices the response holds (a fetch's
// record batches) are valid only until then. A follower fetching from its
// leader appends what it fetched before its next fetch, and so reads
// every answer into one buffer instead of a new one each time.
func (c *Conn) DoReused(ctx context.Context, req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	return c.do(ctx, req, timeout, true)
}

func (c *Conn) do(ctx context.Context, req kmsg.Request, timeout time.Duration, reuse bool) (kmsg.Response, error) {
	name := kmsg.NameForKey(req.Key())
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	nc := c.nc
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c.corr++
	c.buf = c.f.AppendRequest(c.buf[:0], req, c.corr)
	if _, err := c.nc.Write(c.buf); err != nil {
		return nil, fmt.Errorf("send %s: %w", name, err)
	}
	// Without reuse, a new buffer for each response: kmsg keeps slices
	// of what it decodes (a fetch's record batches).
	var buf []byte
	if reuse {
		buf, c.resp = c.resp, nil
	}
	frame, _, err := ReadFrame(c.rd, c.maxFrame, buf, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s response: %w", name, err)
	}
	if reuse && cap(frame) <= maxReusedFrame {
		c.resp = frame
	}
	if corr := int32(binary.BigEndian.Uint32(frame)); corr != c.corr {
		return nil, fmt.Errorf("%w: %s response correlation id %d, want %d", ErrBadResponse, name, corr, c.corr)
	}
	body := frame[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	// ApiVersions answers with header v0 whatever its version (KIP-511).
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		if body, err = skipTags(body); err != nil {
			return nil, fmt.Errorf("%w: %s response header tags", ErrBadResponse, name)
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s response: %w", name, err)
	}
	return resp, nil
}
