package wire

import (
	"crypto/tls"
	"net"
	"sync"
	"time"
)

// A response goes out over TLS in chunks of tlsChunk bytes. crypto/tls
// seals a Write into records of at most 16 KiB and writes each to the
// socket at once, one system call a record; under the TLS connection a
// recordBatcher gathers one chunk's records and writes them in one call.
// A response of 50 MiB then costs 200 writes instead of 3,200.
//
// Each chunk also gets the whole progress timeout: after a write deadline
// passes, a tls.Conn refuses every later write, so the deadline cannot be
// extended while one Write is under way, as writeProgressing does for a
// plain socket. Bounding each chunk's write instead closes a connection
// whose client takes no bytes for that long, and never one that takes a
// large answer slowly but steadily.
const tlsChunk = 256 << 10

// tlsBatchBuffers hold the records of one chunk: its bytes, and for each
// 16 KiB record 5 bytes of header, 1 of content type and 16 of tag.
var tlsBatchBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, tlsChunk+(tlsChunk/(16<<10)+1)*64)
	return &b
}}

// recordBatcher is the socket under a server-side tls.Conn. Writes pass
// straight through, but between gather and flush they are kept and
// written together.
type recordBatcher struct {
	net.Conn
	mu sync.Mutex
	// buf, while gathering, holds what was written since gather.
	buf *[]byte
}

// gather starts keeping writes.
func (r *recordBatcher) gather() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf == nil {
		r.buf = tlsBatchBuffers.Get().(*[]byte)
	}
}

// Write keeps p while gathering, and otherwise writes it.
func (r *recordBatcher) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf == nil {
		return r.Conn.Write(p)
	}
	*r.buf = append(*r.buf, p...)
	return len(p), nil
}

// flush writes what was gathered, failing when a write moves no byte for
// timeout (negative: no limit), and stops gathering.
func (r *recordBatcher) flush(timeout time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf == nil {
		return nil
	}
	err := writeProgressing(r.Conn, *r.buf, timeout)
	*r.buf = (*r.buf)[:0]
	tlsBatchBuffers.Put(r.buf)
	r.buf = nil
	return err
}

// writeTLS writes b to tc in chunks (tlsChunk), each failing when the
// client takes none of it for timeout (negative: no limit).
func writeTLS(tc *tls.Conn, b []byte, timeout time.Duration) error {
	rb, _ := tc.NetConn().(*recordBatcher)
	for len(b) > 0 {
		chunk := b[:min(len(b), tlsChunk)]
		b = b[len(chunk):]
		if timeout >= 0 {
			tc.SetWriteDeadline(time.Now().Add(timeout))
		}
		if rb == nil || len(chunk) <= 16<<10 {
			if _, err := tc.Write(chunk); err != nil {
				return err
			}
			continue
		}
		rb.gather()
		_, err := tc.Write(chunk)
		if ferr := rb.flush(timeout); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
