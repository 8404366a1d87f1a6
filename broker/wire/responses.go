package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxPooledBuffer is the largest response buffer kept for reuse.
const maxPooledBuffer = 16 << 20

// defaultBufSize is the capacity of a new pooled response buffer.
const defaultBufSize = 64 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, defaultBufSize); return &b }}

// GetBuffer returns an empty buffer from the pool response frames are
// encoded into; PutBuffer gives it back. A handler may read into one what
// its response then points into (a fetch's record data) and give it back
// in its Reply.Release.
func GetBuffer() *[]byte { return bufPool.Get().(*[]byte) }

// PutBuffer gives b back to the pool, unless it grew past
// maxPooledBuffer.
func PutBuffer(b *[]byte) {
	if cap(*b) > maxPooledBuffer {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
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
	b := GetBuffer()
	switch {
	case sizeHint > cap(*b):
		*b = make([]byte, 0, sizeHint)
	case sizeHint > 0 && cap(*b) > 2*sizeHint && cap(*b) > defaultBufSize:
		PutBuffer(b)
		fresh := make([]byte, 0, sizeHint)
		b = &fresh
	}
	*b = AppendResponse(*b, correlationID, resp)
	return b
}

// responseQueue holds a connection's encoded responses, in order, until
// its writer has written them, and counts what they hold: for the
// connection (number and bytes) and, in node, for all connections.
type responseQueue struct {
	out      chan queuedResponse // to the writer; never full, see push
	node     *Pool               // klog.queued.max.response.bytes
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

func newResponseQueue(lim Limits, node *Pool) *responseQueue {
	q := &responseQueue{
		out:      make(chan queuedResponse, lim.MaxInflight),
		node:     node,
		maxCount: lim.MaxInflight,
		maxBytes: lim.MaxQueuedResponseBytes,
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
// being made (Reply.Later).
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
				if err := writeResponse(nc, *b, stall); err != nil {
					failed = true
					nc.Close()
				}
			}
			n = int64(cap(*b))
			PutBuffer(b)
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

// writeResponse writes b to nc, over TLS in chunks (writeTLS).
func writeResponse(nc net.Conn, b []byte, timeout time.Duration) error {
	if tc, ok := nc.(*tls.Conn); ok {
		return writeTLS(tc, b, timeout)
	}
	return writeProgressing(nc, b, timeout)
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
