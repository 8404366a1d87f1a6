package coordinator

import (
	"context"
	"sync/atomic"
	"time"
)

// Actor is the goroutine that owns one key's state.
type Actor[S State] struct {
	r     *Runtime[S]
	key   string
	part  int32
	epoch int32
	state S // owned by the actor goroutine

	events chan func(S)
	ctx    context.Context // canceled to stop the actor
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has exited

	inflight int // events sent or being sent and not yet run; guarded by r.mu
}

// Key is the actor's key.
func (a *Actor[S]) Key() string { return a.key }

// Partition is the partition the key was loaded from or created in.
func (a *Actor[S]) Partition() int32 { return a.part }

// Epoch is the leader epoch of that partition when the actor started.
func (a *Actor[S]) Epoch() int32 { return a.epoch }

// Context is canceled when the actor is stopped: the writes of its events
// and what they start are bounded by it.
func (a *Actor[S]) Context() context.Context { return a.ctx }

// State is the key's state. The actor goroutine owns it: another goroutine
// may read only what its user guards with the runtime's lock, holding it.
func (a *Actor[S]) State() S { return a.state }

// Send runs fn on the actor's goroutine and waits for it (SendCounted of
// an event it counts).
func (a *Actor[S]) Send(ctx context.Context, fn func(S)) (<-chan struct{}, error) {
	a.r.mu.Lock()
	a.inflight++
	a.r.mu.Unlock()
	return a.SendCounted(ctx, fn)
}

// SendCounted runs fn, an event already counted by Acquire, on the
// actor's goroutine and waits for it. It returns the actor's Done, or
// ErrNotCoordinator when the actor stopped before fn ran, ErrTimedOut when
// ctx ended first: then fn never runs. A fn that started is waited for:
// it must be bounded.
func (a *Actor[S]) SendCounted(ctx context.Context, fn func(S)) (<-chan struct{}, error) {
	// started arbitrates between the actor running fn and the caller giving
	// up: whoever swaps it first wins, so fn never writes into an answer the
	// caller has already returned.
	var started atomic.Int32
	ran := make(chan struct{})
	ev := func(s S) {
		if started.CompareAndSwap(0, 1) {
			fn(s)
		}
		close(ran)
	}
	select {
	case a.events <- ev:
	case <-a.done:
		a.uncount()
		return nil, ErrNotCoordinator
	case <-ctx.Done():
		a.uncount()
		return nil, ErrTimedOut
	}
	select {
	case <-ran:
		return a.done, nil
	case <-a.done:
		// The actor stopped with the event still queued or running.
		if started.CompareAndSwap(0, 2) {
			return nil, ErrNotCoordinator
		}
		<-ran // it ran to the end before the actor exited
		return a.done, nil
	case <-ctx.Done():
		if started.CompareAndSwap(0, 2) {
			return nil, ErrTimedOut
		}
		// fn is running; it is bounded, so wait for it.
		<-ran
		return a.done, nil
	}
}

func (a *Actor[S]) uncount() {
	a.r.mu.Lock()
	a.inflight--
	a.r.mu.Unlock()
}

func (a *Actor[S]) loop() {
	defer a.r.wg.Done()
	defer close(a.done)
	defer a.state.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Stop()
		if d, ok := a.state.Deadline(); ok {
			timer.Reset(max(d.Sub(a.r.cfg.Now()), minTimerDelay))
		}
		select {
		case <-a.ctx.Done():
			return
		case ev := <-a.events:
			ev(a.state)
			a.uncount()
		case <-timer.C:
			a.state.Tick()
		}
		if a.state.Reapable() && a.tryReap() {
			return
		}
	}
}

// tryReap removes the actor from the runtime when no event is queued or
// about to be.
func (a *Actor[S]) tryReap() bool {
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	if a.inflight > 0 || a.r.mu.actors[a.key] != a {
		return false
	}
	a.r.removeLocked(a)
	a.cancel()
	a.r.log.Debug("key removed", "topic", a.r.cfg.Topic, "key", a.key)
	return true
}
