package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrPoolTooSmall is returned by Pool.Acquire for a request larger than the
// whole pool: it could never be granted.
var ErrPoolTooSmall = errors.New("wire: request larger than the request memory pool")

// SmallFrameBytes is the largest frame, size prefix excluded, the pool
// counts as small: the requests a client needs to get going (ApiVersions,
// Metadata, a small produce) are far below it.
const SmallFrameBytes = 64 << 10

// Pool is a node-wide budget of request bytes (Kafka's
// queued.max.request.bytes): memory for a request frame is taken from it as
// the frame's bytes arrive and given back once the request was handled.
// When it is exhausted, readers wait in Acquire, which stops them reading
// from their sockets: backpressure instead of memory.
//
// Frames come in two classes, by the size their prefix claims, not by the
// bytes asked for at once (a large frame's first bites are small):
//
//   - Large frames share the pool's limit and wait in arrival order, so one
//     is not starved by a stream of others.
//   - Small frames (at most SmallFrameBytes) never queue behind large ones:
//     they are granted whenever they fit in the limit plus a headroom of
//     their own (Headroom), so a normal client is served while large frames
//     sent halfway and stalled hold the whole limit. While large frames
//     wait, small ones together may hold no more than the headroom, so that
//     a stream of small frames cannot starve a large one either.
//
// The pool therefore holds at most Limit+Headroom bytes.
//
// A node-wide pool of response bytes (klog.queued.max.response.bytes)
// counts differently: memory whose size is known only once it exists, such
// as an encoded response, is counted with Take, which never waits; memory
// about to be read, such as a fetch's record data, with TakeUpTo and
// TakeIfAlone, which never wait either but stay within the limit; and Over
// stops connections from reading further requests while the responses of
// all connections together hold it. All of it counts as large.
type Pool struct {
	limit    int64
	headroom int64
	// alone is held by the one caller of TakeAlone that may go past the
	// limit.
	alone chan struct{}

	mu struct {
		sync.Mutex
		large   int64         // bytes of large frames and of Take
		small   int64         // bytes of small frames
		waiting []*poolWaiter // large frames, FIFO
		// smallWaiting are small frames that did not fit even in the
		// headroom; each is granted as soon as it fits.
		smallWaiting []*poolWaiter
		// freed, made by Over, is closed at the next Release.
		freed chan struct{}
	}
}

type poolWaiter struct {
	n     int64
	ready chan struct{} // closed once n bytes were granted
}

// NewPool returns a pool of limit bytes for large frames, with a headroom
// for small ones of limit/16, at least SmallFrameBytes.
func NewPool(limit int64) *Pool {
	return &Pool{limit: limit, headroom: max(limit/16, SmallFrameBytes), alone: make(chan struct{}, 1)}
}

// TakeAlone is for one caller at a time that may need more than the
// pool: it waits, or until ctx is done, for the previous caller to call
// DoneAlone and for the pool to be below its limit (so that what earlier
// callers kept is given back first), then takes n bytes or what is left
// below the limit, and returns what it took. The rest of n is the one
// caller's past the pool, not counted, so that small frames keep their
// headroom meanwhile: the pool's memory is at most its limit, its headroom
// and that caller's rest. The caller gives back what it took with Release
// (DoneAlone only lets the next caller in).
func (p *Pool) TakeAlone(ctx context.Context, n int64) (int64, error) {
	select {
	case p.alone <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	for {
		p.mu.Lock()
		if used := p.mu.large + p.mu.small; used < p.limit {
			n = min(n, p.limit-used)
			p.mu.large += n
			p.mu.Unlock()
			return n, nil
		}
		freed := p.freedLocked()
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			<-p.alone
			return 0, ctx.Err()
		}
	}
}

// DoneAlone lets the next caller of TakeAlone take its bytes.
func (p *Pool) DoneAlone() { <-p.alone }

// Limit returns the pool's size in bytes.
func (p *Pool) Limit() int64 { return p.limit }

// Headroom returns the bytes beyond Limit only small frames may take.
func (p *Pool) Headroom() int64 { return p.headroom }

// Reserved returns the bytes currently taken from the pool.
func (p *Pool) Reserved() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.large + p.mu.small
}

// Waiting returns how many large frames wait for bytes: the limit is
// exhausted for them.
func (p *Pool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.waiting)
}

// isSmall reports whether a frame of frame bytes is in the small class.
func isSmall(frame int64) bool { return frame <= SmallFrameBytes }

// TryAcquire takes n more bytes for a frame of frame bytes if they can be
// granted now without waiting.
func (p *Pool) TryAcquire(frame, n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tryLocked(frame, n)
}

// tryLocked grants n bytes for a frame of frame bytes if it may have them
// now.
func (p *Pool) tryLocked(frame, n int64) bool {
	if isSmall(frame) {
		if !p.smallFitsLocked(n) {
			return false
		}
		p.mu.small += n
		return true
	}
	if len(p.mu.waiting) > 0 || !p.largeFitsLocked(n) {
		return false
	}
	p.mu.large += n
	return true
}

// smallFitsLocked reports whether n bytes of a small frame may be granted.
func (p *Pool) smallFitsLocked(n int64) bool {
	if p.mu.large+p.mu.small+n > p.limit+p.headroom {
		return false
	}
	// Waiting large frames get what small ones free beyond the headroom.
	return len(p.mu.waiting) == 0 || p.mu.small+n <= p.headroom
}

// largeFitsLocked reports whether n bytes of a large frame fit.
func (p *Pool) largeFitsLocked(n int64) bool {
	return p.mu.large+n <= p.limit && p.mu.large+p.mu.small+n <= p.limit+p.headroom
}

// Acquire takes n more bytes for a frame of frame bytes, waiting until they
// can be granted or ctx is done.
func (p *Pool) Acquire(ctx context.Context, frame, n int64) error {
	small := isSmall(frame)
	bound := p.limit
	if small {
		bound += p.headroom
	}
	if n > bound {
		return fmt.Errorf("%w: %d > %d", ErrPoolTooSmall, n, bound)
	}
	p.mu.Lock()
	if p.tryLocked(frame, n) {
		p.mu.Unlock()
		return nil
	}
	w := &poolWaiter{n: n, ready: make(chan struct{})}
	queue := &p.mu.waiting
	if small {
		queue = &p.mu.smallWaiting
	}
	*queue = append(*queue, w)
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
		if small {
			p.mu.small -= n
		} else {
			p.mu.large -= n
		}
	default:
		if i := slices.Index(*queue, w); i >= 0 {
			*queue = slices.Delete(*queue, i, i+1)
		}
	}
	p.grantLocked()
	return ctx.Err()
}

// ReleaseFrame gives back n bytes acquired for a frame of frame bytes.
func (p *Pool) ReleaseFrame(frame, n int64) { p.release(isSmall(frame), n) }

// Release gives back n bytes counted with Take.
func (p *Pool) Release(n int64) { p.release(false, n) }

func (p *Pool) release(small bool, n int64) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if small {
		p.mu.small -= n
	} else {
		p.mu.large -= n
	}
	if p.mu.small < 0 || p.mu.large < 0 {
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
	p.mu.large += n
	p.mu.Unlock()
}

// TakeUpTo takes n bytes, or what is left below the limit when that is
// less, and returns what it took; it never waits. Unlike Take it checks
// and takes under one lock, so concurrent callers never take more than
// the pool has free between them.
func (p *Pool) TakeUpTo(n int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n = max(min(n, p.limit-p.mu.large-p.mu.small), 0)
	p.mu.large += n
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
	used := p.mu.large + p.mu.small
	if used+n > p.limit && used > own {
		return false
	}
	p.mu.large += n
	return true
}

// Over reports whether the pool is at or past its limit and, when it is,
// returns a channel closed at the next Release: a caller that must also
// watch other events selects on it and asks again.
func (p *Pool) Over() (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.large+p.mu.small < p.limit {
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

// grantLocked wakes the large waiters at the head of their queue whose
// bytes now fit, then every small waiter that fits.
func (p *Pool) grantLocked() {
	for len(p.mu.waiting) > 0 {
		w := p.mu.waiting[0]
		if !p.largeFitsLocked(w.n) {
			break
		}
		p.mu.large += w.n
		p.mu.waiting[0] = nil
		p.mu.waiting = p.mu.waiting[1:]
		close(w.ready)
	}
	p.mu.smallWaiting = slices.DeleteFunc(p.mu.smallWaiting, func(w *poolWaiter) bool {
		if !p.smallFitsLocked(w.n) {
			return false
		}
		p.mu.small += w.n
		close(w.ready)
		return true
	})
}
