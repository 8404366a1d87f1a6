// Package kwire is one TCP connection speaking the Kafka protocol by hand,
// for klog's test tools (scripts/hostile, scripts/kafka/protodiff): requests
// no well-behaved client sends, at exactly the version asked for, with no
// client-side retries, sharding or rewriting of the response. kmsg encodes
// and decodes; only the 4-byte frame length and the response header are
// handled here.
package kwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var (
	// ErrNoVersion means the node does not serve the API of a request.
	ErrNoVersion = errors.New("api not served by the node")
	// ErrFrame means a response frame or header could not be read.
	ErrFrame = errors.New("malformed response frame")
)

// Conn is one connection to a node.
type Conn struct {
	c        net.Conn
	f        *kmsg.RequestFormatter
	versions map[int16]int16 // highest version the node serves per key; nil: no check
	mu       struct {
		sync.Mutex
		corr int32
		sent map[int32]kmsg.Request // by correlation id, until answered
	}
}

// Dial connects to addr within 5 s. versions (from Versions, or nil) is
// what the node serves: a request left at version 0 is sent at the highest
// version both kmsg and the node know.
func Dial(addr, clientID string, versions map[int16]int16) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	r := &Conn{c: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)), versions: versions}
	r.mu.sent = map[int32]kmsg.Request{}
	return r, nil
}

// Close closes the connection.
func (r *Conn) Close() error { return r.c.Close() }

// Net is the underlying connection, for writes that ignore the framing.
func (r *Conn) Net() net.Conn { return r.c }

// LocalPort is the client side port of the connection.
func (r *Conn) LocalPort() int { return r.c.LocalAddr().(*net.TCPAddr).Port }

// Encode frames req with the next correlation id, at the version it was
// given or else the highest both kmsg and the node know.
func (r *Conn) Encode(req kmsg.Request) ([]byte, error) {
	if r.versions != nil {
		served, ok := r.versions[req.Key()]
		if !ok {
			return nil, fmt.Errorf("%w: key %d", ErrNoVersion, req.Key())
		}
		if req.GetVersion() == 0 {
			req.SetVersion(min(req.MaxVersion(), served))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.corr++
	r.mu.sent[r.mu.corr] = req
	return r.f.AppendRequest(nil, req, r.mu.corr), nil
}

// Send writes one request.
func (r *Conn) Send(req kmsg.Request) error {
	b, err := r.Encode(req)
	if err != nil {
		return err
	}
	return r.Write(b)
}

// Write writes raw bytes within 5 s.
func (r *Conn) Write(b []byte) error {
	_ = r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := r.c.Write(b)
	return err
}

// Recv reads the next response, decoded as the answer to the request of
// its correlation id, and returns it with its frame size.
func (r *Conn) Recv(timeout time.Duration) (kmsg.Response, int, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(timeout))
	var size [4]byte
	if _, err := io.ReadFull(r.c, size[:]); err != nil {
		return nil, 0, err
	}
	n := binary.BigEndian.Uint32(size[:])
	frame := make([]byte, n)
	if _, err := io.ReadFull(r.c, frame); err != nil {
		return nil, 0, err
	}
	if n < 4 {
		return nil, 0, fmt.Errorf("%w: response frame of %d bytes", ErrFrame, n)
	}
	corr := int32(binary.BigEndian.Uint32(frame))
	r.mu.Lock()
	req, ok := r.mu.sent[corr]
	delete(r.mu.sent, corr)
	r.mu.Unlock()
	if !ok {
		return nil, 0, fmt.Errorf("%w: response to unknown correlation id %d", ErrFrame, corr)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body := frame[4:]
	if resp.IsFlexible() && req.Key() != 18 { // ApiVersions answers with header v0
		var err error
		if body, err = SkipTags(body); err != nil {
			return nil, 0, err
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, 0, fmt.Errorf("decode %T: %w", resp, err)
	}
	return resp, int(n) + 4, nil
}

// Do sends req and reads its response.
func (r *Conn) Do(req kmsg.Request, timeout time.Duration) (kmsg.Response, int, error) {
	if err := r.Send(req); err != nil {
		return nil, 0, err
	}
	return r.Recv(timeout)
}

// SkipTags skips a response header's tagged fields.
func SkipTags(b []byte) ([]byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, fmt.Errorf("%w: response header tags", ErrFrame)
	}
	b = b[w:]
	for range n {
		_, w := binary.Uvarint(b) // tag
		if w <= 0 {
			return nil, fmt.Errorf("%w: response header tag", ErrFrame)
		}
		b = b[w:]
		size, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < size {
			return nil, fmt.Errorf("%w: response header tag size", ErrFrame)
		}
		b = b[w+int(size):]
	}
	return b, nil
}

// ClosedWithin reports whether the node closes the connection within d:
// a read ends with EOF or a reset rather than the deadline. Bytes the node
// sends meanwhile are discarded.
func (r *Conn) ClosedWithin(d time.Duration) bool {
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		if _, err := r.c.Read(buf); err != nil {
			return !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
}

// Versions asks the node at addr which API versions it serves (ApiVersions
// v0) and returns the highest per key.
func Versions(addr, clientID string) (map[int16]int16, error) {
	r, err := Dial(addr, clientID, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(0)
	resp, _, err := r.Do(req, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	v := map[int16]int16{}
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		v[k.ApiKey] = k.MaxVersion
	}
	return v, nil
}

// ProduceRequest is a produce of one batch to one partition at v12, the
// last version that names topics (13 uses topic ids), with a 5 s timeout.
func ProduceRequest(topic string, partition int32, acks int16, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(12)
	req.Acks, req.TimeoutMillis = acks, 5000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	pt := kmsg.NewProduceRequestTopicPartition()
	pt.Partition, pt.Records = partition, batch
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)
	return req
}

// SASLHandshake is a SaslHandshake v1 for mechanism: SaslAuthenticate
// requests carry the exchange's tokens after it.
func SASLHandshake(mechanism string) *kmsg.SASLHandshakeRequest {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = 1, mechanism
	return req
}

// SASLAuthenticate is a SaslAuthenticate v2 carrying token.
func SASLAuthenticate(token []byte) *kmsg.SASLAuthenticateRequest {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = 2, token
	return req
}
