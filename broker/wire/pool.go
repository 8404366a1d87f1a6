package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrPoolTooSmall is returned by Pool.Acquire for a request larger than the
// whole pool: it could never be granted.
var ErrPoolTooSmall = errors.New("wire: request larger than the request memory pool")

// Pool is a node-wide budget of request bytes (Kafka's
// queued.max.request.bytes): memory for a request frame is taken from it as
// the frame's bytes arrive and given back once the request was handled.
// When it is exhausted, readers wait in Acquire, which stops them reading
// from their sockets: backpressure instead of memory.
//
// Waiters are served in arrival order, so a large request is not starved by
// a stream of small ones.
//
// Memory whose size is known only once it exists, such as an encoded
// response, is counted with Take instead, which never waits; memory about
// to be read, such as a fetch's record data, with TakeUpTo and
// TakeIfAlone, which never wait either but stay within the limit: a
// node-wide
// pool of response bytes (klog.queued.max.response.bytes) stops connections
// from reading further requests, with Over, while the responses of all
// connections together hold it.
type Pool struct {
	limit int64

	mu struct {
		sync.Mutex
		used    int64
		waiters []*poolWaiter // FIFO
		// freed, made by Over, is closed at the next Release.
		freed chan struct{}
	}
}

type poolWaiter struct {
	n     int64
	ready chan struct{} // closed once n bytes were granted
}

// NewPool returns a pool of limit bytes.
func NewPool(limit int64) *Pool { return &Pool{limit: limit} }

// Limit returns the pool's size in bytes.
func (p *Pool) Limit() int64 { return p.limit }

// Reserved returns the bytes currently taken from the pool.
func (p *Pool) Reserved() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.used
}

// TryAcquire takes n bytes if they are free now and nobody is waiting.
func (p *Pool) TryAcquire(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.mu.waiters) == 0 && p.mu.used+n <= p.limit {
		p.mu.used += n
		return true
	}
	return false
}

// Acquire takes n bytes, waiting until they are free or ctx is done.
func (p *Pool) Acquire(ctx context.Context, n int64) error {
	if n > p.limit {
		return fmt.Errorf("%w: %d > %d", ErrPoolTooSmall, n, p.limit)
	}
	p.mu.Lock()
	if len(p.mu.waiters) == 0 && p.mu.used+n <= p.limit {
		p.mu.used += n
		p.mu.Unlock()
		return nil
	}
	w := &poolWaiter{n: n, ready: make(chan struct{})}
	p.mu.waiters = append(p.mu.waiters, w)
	p.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-w.ready:
		// Granted while we gave up: hand the bytes on.
		p.mu.used -= n
	default:
		for i, o := range p.mu.waiters {
			if o == w {
				p.mu.waiters = append(p.mu.waiters[:i], p.mu.waiters[i+1:]...)
				break
			}
		}
	}
	p.grantLocked()
	return ctx.Err()
}

// Release gives n bytes back to the pool.
func (p *Pool) Release(n int64) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.used -= n
	if p.mu.used < 0 {
		panic("wire: pool released more than it granted")
	}
	if p.mu.freed != nil {
		close(p.mu.freed)
		p.mu.freed = nil
	}
	p.grantLocked()
}

// Take takes n bytes at once, whatever the pool holds already, so the pool
// may hold more than its limit. A caller about to take more asks Over
// first.
func (p *Pool) Take(n int64) {
	p.mu.Lock()
	p.mu.used += n
	p.mu.Unlock()
}

// TakeUpTo takes n bytes, or what is left below the limit when that is
// less, and returns what it took; it never waits. Unlike Take it checks
// and takes under one lock, so concurrent callers never take more than
// the pool has free between them.
func (p *Pool) TakeUpTo(n int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n = max(min(n, p.limit-p.mu.used), 0)
	p.mu.used += n
	return n
}

// TakeIfAlone takes n bytes when they fit below the limit, or when the
// pool holds nothing but the caller's own bytes, past the limit then: one
// caller at a time may hold more than the limit, so that an item larger
// than the whole pool is not refused for good. It reports whether it took
// them.
func (p *Pool) TakeIfAlone(n, own int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.used+n > p.limit && p.mu.used > own {
		return false
	}
	p.mu.used += n
	return true
}

// Over reports whether the pool is at or past its limit and, when it is,
// returns a channel closed at the next Release: a caller that must also
// watch other events selects on it and asks again.
func (p *Pool) Over() (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.used < p.limit {
		return false, nil
	}
	return true, p.freedLocked()
}

// Freed returns a channel closed at the next Release.
func (p *Pool) Freed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.freedLocked()
}

func (p *Pool) freedLocked() <-chan struct{} {
	if p.mu.freed == nil {
		p.mu.freed = make(chan struct{})
	}
	return p.mu.freed
}

// grantLocked wakes the waiters at the head of the queue whose bytes now
// fit.
func (p *Pool) grantLocked() {
	for len(p.mu.waiters) > 0 {
		w := p.mu.waiters[0]
		if p.mu.used+w.n > p.limit {
			return
		}
		p.mu.used += w.n
		p.mu.waiters[0] = nil
		p.mu.waiters = p.mu.waiters[1:]
		close(w.ready)
	}
}
