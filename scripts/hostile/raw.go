package main

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

// rawConn is one TCP connection speaking the Kafka protocol by hand, for
// requests no well-behaved client sends. kmsg encodes and decodes; only
// the 4-byte frame length and the response header are handled here.
type rawConn struct {
	c        net.Conn
	f        *kmsg.RequestFormatter
	versions map[int16]int16 // highest version the node serves per key
	mu       struct {
		sync.Mutex
		corr int32
		sent map[int32]kmsg.Request // by correlation id, until answered
	}
}

// dialRaw connects to the node.
func dialRaw(n *node) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", n.addr(), 5*time.Second)
	if err != nil {
		return nil, err
	}
	r := &rawConn{c: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("hostile")), versions: n.versions}
	r.mu.sent = map[int32]kmsg.Request{}
	return r, nil
}

func (r *rawConn) Close() error { return r.c.Close() }

// localPort is the client side port of the connection.
func (r *rawConn) localPort() int { return r.c.LocalAddr().(*net.TCPAddr).Port }

// encode frames req with the next correlation id, at the version it was
// given or else the highest both kmsg and the node know.
func (r *rawConn) encode(req kmsg.Request) ([]byte, error) {
	if r.versions != nil {
		served, ok := r.versions[req.Key()]
		if !ok {
			return nil, fmt.Errorf("%w: key %d", errNoVersion, req.Key())
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

// send writes one request.
func (r *rawConn) send(req kmsg.Request) error {
	b, err := r.encode(req)
	if err != nil {
		return err
	}
	return r.write(b)
}

// write writes raw bytes within 5 s.
func (r *rawConn) write(b []byte) error {
	_ = r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := r.c.Write(b)
	return err
}

// recv reads the next response, decoded as the answer to the request of
// its correlation id, and returns it with its frame size.
func (r *rawConn) recv(timeout time.Duration) (kmsg.Response, int, error) {
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
		return nil, 0, fmt.Errorf("%w: response frame of %d bytes", errBadProc, n)
	}
	corr := int32(binary.BigEndian.Uint32(frame))
	r.mu.Lock()
	req, ok := r.mu.sent[corr]
	delete(r.mu.sent, corr)
	r.mu.Unlock()
	if !ok {
		return nil, 0, fmt.Errorf("response to unknown correlation id %d", corr)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body := frame[4:]
	if resp.IsFlexible() && req.Key() != 18 { // ApiVersions answers with header v0
		var err error
		if body, err = skipTags(body); err != nil {
			return nil, 0, err
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, 0, fmt.Errorf("decode %T: %w", resp, err)
	}
	return resp, int(n) + 4, nil
}

// do sends req and reads its response.
func (r *rawConn) do(req kmsg.Request, timeout time.Duration) (kmsg.Response, int, error) {
	if err := r.send(req); err != nil {
		return nil, 0, err
	}
	return r.recv(timeout)
}

// skipTags skips a response header's tagged fields.
func skipTags(b []byte) ([]byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, fmt.Errorf("%w: response header tags", errBadProc)
	}
	b = b[w:]
	for range n {
		_, w := binary.Uvarint(b) // tag
		if w <= 0 {
			return nil, fmt.Errorf("%w: response header tag", errBadProc)
		}
		b = b[w:]
		size, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < size {
			return nil, fmt.Errorf("%w: response header tag size", errBadProc)
		}
		b = b[w+int(size):]
	}
	return b, nil
}

// closedWithin reports whether the node closes the connection within d:
// a read ends with EOF or a reset rather than the deadline. Bytes the node
// sends meanwhile are discarded.
func (r *rawConn) closedWithin(d time.Duration) bool {
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		if _, err := r.c.Read(buf); err != nil {
			return !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
}

// fetchVersions asks the node which API versions it serves.
func fetchVersions(n *node) (map[int16]int16, error) {
	r, err := dialRaw(n)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(0)
	resp, _, err := r.do(req, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	v := map[int16]int16{}
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		v[k.ApiKey] = k.MaxVersion
	}
	return v, nil
}
