// Package wire is klog's Kafka transport: it reads and writes Kafka
// protocol frames (the 4-byte size prefix, the request header and the
// response header), serves a listener's connections (Server: framing, the
// request and response memory bounds, answers written in request order,
// deferred answers, idle and progress timeouts, the drain) and is the
// client side of the node-to-node connections (Conn). Request and response
// bodies are decoded and encoded by franz-go's kmsg; this package only
// knows the envelope around them and what a connection holds.
//
// The server lives here, beside the frame codec and the memory pools it
// is built on, rather than in a package of its own: the frame reader, the
// pools and the decode bounds exist for it, and one package keeps the
// transport's invariants (what a connection may hold, when it is read) in
// one place. A Handler, defined here, serves the decoded requests; wire
// never imports the broker's handlers (package broker imports wire), and
// imports nothing of klog's.
//
// Request frame:
//
//	+----------------+------------+------------+----------------+---------------------+------------+------+
//	| size int32     | api key    | api ver    | correlation id | client id           | tags       | body |
//	| (excl. itself) | int16      | int16      | int32          | int16 len + bytes   | (v2 hdr)   |      |
//	+----------------+------------+------------+----------------+---------------------+------------+------+
//
// The tagged-field section exists only in request header v2, used by flexible
// versions (KIP-482). Responses carry the correlation id, then an empty tag
// section for flexible versions — except ApiVersions, whose response header is
// always v0 so that a client can parse it before it knows the broker's
// versions.
package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrFrameTooLarge is returned when a frame's size prefix exceeds the limit
// (Kafka's socket.request.max.bytes). The connection must be closed.
var ErrFrameTooLarge = errors.New("wire: frame exceeds the maximum request size")

// ErrMalformed is returned for a frame whose header cannot be parsed. The
// connection must be closed.
var ErrMalformed = errors.New("wire: malformed request header")

// Header is a parsed request header.
type Header struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      *string
}

// ReadFrame reads one size-prefixed frame into buf (grown if needed) and
// returns the frame without its size prefix. Frames larger than maxSize are
// rejected with ErrFrameTooLarge before anything is allocated for them.
//
// Nothing is allocated for bytes that have not arrived: the body is copied
// out of r as r receives it, and buf grows (doubling, up to the frame's
// size) only when those bytes do not fit. Before taking more memory
// ReadFrame calls reserve with the frame's size, as its prefix claims, and
// the bytes it is about to use beyond what it reserved so far: the bytes
// copied into buf, or the capacity of a buffer it allocated. The size
// lets a pool tell a small request from the first bites of a large one.
// It returns the total it reserved, also on error, for the caller to give
// back once the request was handled. An error from reserve ends the read.
// reserve may be nil.
func ReadFrame(r *bufio.Reader, maxSize int32, buf []byte, reserve func(size, n int) error) (frame []byte, reserved int, err error) {
	var sizeBuf [4]byte
	if _, err := io.ReadFull(r, sizeBuf[:]); err != nil {
		return nil, 0, err
	}
	size := int(int32(binary.BigEndian.Uint32(sizeBuf[:])))
	if size < 8 {
		return nil, 0, fmt.Errorf("%w: frame of %d bytes", ErrMalformed, size)
	}
	if size > int(maxSize) {
		return nil, 0, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, size, maxSize)
	}
	buf = buf[:0]
	owned := false // buf was allocated here, so its whole capacity is reserved
	for len(buf) < size {
		if r.Buffered() == 0 && cap(buf) > len(buf) {
			// Room the buffer already has (a reused frame): read into it
			// straight from the connection, not through r's buffer, and
			// reserve what arrived. Large frames cost no extra copy.
			n, err := r.Read(buf[len(buf):min(cap(buf), size)])
			buf = buf[:len(buf)+n]
			if end := len(buf); !owned && end > reserved {
				if reserve != nil {
					if rerr := reserve(size, end-reserved); rerr != nil {
						return nil, reserved, rerr
					}
				}
				reserved = end
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return nil, reserved, err
			}
			continue
		}
		if r.Buffered() == 0 {
			if _, err := r.Peek(1); err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return nil, reserved, err
			}
		}
		end := len(buf) + min(r.Buffered(), size-len(buf))
		want := end
		grow := end > cap(buf)
		newCap := cap(buf)
		if grow {
			newCap = min(size, max(end, 2*cap(buf)))
			want = newCap
		} else if owned {
			want = cap(buf)
		}
		if want > reserved {
			if reserve != nil {
				if err := reserve(size, want-reserved); err != nil {
					return nil, reserved, err
				}
			}
			reserved = want
		}
		if grow {
			nb := make([]byte, len(buf), newCap)
			copy(nb, buf)
			buf, owned = nb, true
		}
		// The bytes are buffered: this copies them without reading.
		n, _ := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
	}
	return buf, reserved, nil
}

// PeekFrame returns the size prefix, API key and version of the next frame
// in r without consuming them, waiting for its first 8 bytes: enough to
// refuse a request before its body is read.
func PeekFrame(r *bufio.Reader) (size int32, key, version int16, err error) {
	b, err := r.Peek(8)
	if err != nil {
		return 0, 0, 0, err
	}
	return int32(binary.BigEndian.Uint32(b)), int16(binary.BigEndian.Uint16(b[4:])), int16(binary.BigEndian.Uint16(b[6:])), nil
}

// ParseHeader parses the request header at the start of frame. flexible
// reports whether the header is v2 (it has a tag section); callers learn it
// from the request type at the parsed key and version. It returns the
// header and the body that follows it.
func ParseHeader(frame []byte, flexible func(key, version int16) bool) (Header, []byte, error) {
	var h Header
	if len(frame) < 10 {
		return h, nil, ErrMalformed
	}
	h.Key = int16(binary.BigEndian.Uint16(frame[0:]))
	h.Version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	n := int16(binary.BigEndian.Uint16(frame[8:]))
	rest := frame[10:]
	if n >= 0 {
		if int(n) > len(rest) {
			return h, nil, ErrMalformed
		}
		s := string(rest[:n])
		h.ClientID = &s
		rest = rest[n:]
	} else if n != -1 {
		return h, nil, ErrMalformed
	}
	if flexible != nil && flexible(h.Key, h.Version) {
		var err error
		if rest, err = skipTags(rest); err != nil {
			return h, nil, err
		}
	}
	return h, rest, nil
}

// skipTags skips a tagged-field section: a uvarint count, then for each
// field a uvarint tag, a uvarint size and that many bytes.
func skipTags(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, ErrMalformed
	}
	b = b[n:]
	for i := uint64(0); i < count; i++ {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, ErrMalformed
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, ErrMalformed
		}
		b = b[n+int(size):]
	}
	return b, nil
}

// AppendResponse appends a complete response frame (size prefix, response
// header, body) to dst.
func AppendResponse(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	// ApiVersions always answers with response header v0.
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		dst = append(dst, 0) // empty tag section
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
