package wire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// errDecodeTooLarge closes a connection whose request would decode into
// more than the request pool (queued.max.request.bytes) can ever hold, as
// a frame larger than socket.request.max.bytes closes it.
var errDecodeTooLarge = errors.New("request would decode into more than queued.max.request.bytes")

// decodeCharge is what a request holds of the request pool
// (queued.max.request.bytes) for what its body decodes into, on top of
// its frame: the most it may decode into (DecodeBound), from before
// it is decoded until it was handled, so that many small elements cannot
// turn a request the pool admitted into many times its bytes. The
// handler's own work on the elements (the sets it dedupes them into, its
// response) is counted nowhere else, and the bound, made for elements that
// carry nothing, is several times what a request of such elements decodes
// into: holding the bound while the handler runs leaves room for that
// work too. A large Produce keeps only what it did decode into
// (DecodedSize, settle): its records are not elements.
//
// A request whose bound the pool can never hold is not decoded: its
// connection closes (errDecodeTooLarge). A Produce is the exception,
// since its bulk is record data that decodes into nothing (the decoded
// request points into the frame), and the bound, made for elements that
// carry nothing, is far above what a Produce of real records decodes
// into: such a Produce decodes alone (Pool.TakeAlone), holding its
// bound past the pool's limit, one at a time, and then only what it
// decoded into; one that decoded into more than the pool is not handled
// (settle). So the node holds at most the pool, its headroom and the
// bound of one Produce, the last only while it is decoded.
type decodeCharge struct {
	pool    *Pool
	class   int64 // the size its bytes are counted under, small or large
	held    int64
	produce bool // settled once decoded
	alone   bool // taken with TakeAlone, not yet settled
}

// decodeTooLarge reports whether a request of key at version in a frame
// of frameLen bytes may decode into more than pool can ever grant it.
func decodeTooLarge(pool *Pool, key, version int16, frameLen int) bool {
	if key == kmsg.Produce.Int16() {
		return false
	}
	return !decodeFits(pool, DecodeBound(key, version, frameLen), frameLen)
}

// decodeFits reports whether pool can ever grant need bytes to a request
// that holds a frame of frameLen bytes: both within the limit, and the
// headroom too for a small frame.
func decodeFits(pool *Pool, need int64, frameLen int) bool {
	limit := pool.Limit()
	if frameLen <= SmallFrameBytes {
		limit += pool.Headroom()
	}
	return int64(frameLen)+need <= limit
}

// chargeDecode takes from the request pool what a request of hdr in a
// frame of frameLen bytes may decode into, counted in the class of its
// frame (Pool), waiting for it at most timeout. The frame's header
// is counted as if it were body: a few bytes more.
func (s *Server) chargeDecode(ctx context.Context, hdr Header, frameLen int, timeout time.Duration) (*decodeCharge, error) {
	need := DecodeBound(hdr.Key, hdr.Version, frameLen)
	c := &decodeCharge{pool: s.cfg.Requests, class: int64(frameLen), produce: hdr.Key == kmsg.Produce.Int16()}
	if need == 0 {
		return c, nil
	}
	fits := decodeFits(c.pool, need, frameLen)
	if fits && c.pool.TryAcquire(c.class, need) {
		c.held = need
		return c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
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
		c.class = SmallFrameBytes + 1 // counted as large
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
	if !c.produce || !c.alone && c.held <= SmallFrameBytes {
		return nil
	}
	var decoded int64
	if req != nil {
		decoded = DecodedSize(req)
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
