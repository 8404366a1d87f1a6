// Package ratelog keeps repeated log lines from flooding a node's log.
//
// A client can make a node log the same line thousands of times a second:
// a connection that sends malformed requests in a loop, a timestamp lookup
// that keeps meeting an unreadable batch, every produce while the disk is
// full. Handler wraps an slog.Handler and lets through at most Burst
// records of one kind per Window; a kind is the record's level and
// message, whatever its attributes, so "segment roll failed" on a thousand
// partitions counts as one kind. The first record of a kind let through
// after some were held back carries a "suppressed" attribute with how many
// were dropped, so nothing is hidden without trace.
//
// Debug records are never limited: a user who asks for them asks for all of
// them.
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultBurst  = 5
	DefaultWindow = 10 * time.Second
	// maxKinds bounds the limiter's memory. Messages are constant strings in
	// klog, so this is never reached in practice; if it is, windows that
	// have ended are forgotten first, and then new kinds pass unlimited
	// rather than evicting counts that are still being held back.
	maxKinds = 1024
)

// Options tune a Handler. The zero value means the defaults.
type Options struct {
	// Burst is how many records of one kind pass per window.
	Burst int
	// Window is the length of one window.
	Window time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// kind is what makes two records "the same line".
type kind struct {
	level slog.Level
	msg   string
}

// window counts one kind's records in its current window.
type window struct {
	start      time.Time
	passed     int
	suppressed int
}

// limiter is shared by a Handler and every handler derived from it with
// WithAttrs or WithGroup, so a logger's children count together.
type limiter struct {
	burst  int
	window time.Duration
	now    func() time.Time

	mu struct {
		sync.Mutex
		kinds map[kind]*window
	}
}

// Handler is an slog.Handler that drops repeats beyond a rate; see the
// package doc.
type Handler struct {
	next slog.Handler
	lim  *limiter
}

// New wraps next.
func New(next slog.Handler, opts Options) *Handler {
	l := &limiter{burst: opts.Burst, window: opts.Window, now: opts.Now}
	if l.burst <= 0 {
		l.burst = DefaultBurst
	}
	if l.window <= 0 {
		l.window = DefaultWindow
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.mu.kinds = make(map[kind]*window)
	return &Handler{next: next, lim: l}
}

// Enabled reports whether the wrapped handler takes records at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle passes r on unless its kind has used up its window, adding the
// count of records held back since the last one that passed.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelInfo {
		return h.next.Handle(ctx, r)
	}
	pass, suppressed := h.lim.admit(kind{r.Level, r.Message})
	if !pass {
		return nil
	}
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", suppressed))
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a handler with attrs that shares h's limits.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(attrs), lim: h.lim}
}

// WithGroup returns a handler with a group that shares h's limits.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), lim: h.lim}
}

// admit counts one record of k and says whether it passes and, if so, how
// many records of k were dropped before it.
func (l *limiter) admit(k kind) (pass bool, suppressed int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.mu.kinds[k]
	if w == nil {
		if len(l.mu.kinds) >= maxKinds && !l.forgetEndedLocked(now) {
			return true, 0
		}
		w = &window{start: now}
		l.mu.kinds[k] = w
	}
	if now.Sub(w.start) >= l.window {
		w.start, w.passed = now, 0
	}
	if w.passed >= l.burst {
		w.suppressed++
		return false, 0
	}
	w.passed++
	suppressed, w.suppressed = w.suppressed, 0
	return true, suppressed
}

// forgetEndedLocked drops the kinds whose window has ended with nothing
// held back, and reports whether that made room.
func (l *limiter) forgetEndedLocked(now time.Time) bool {
	for k, w := range l.mu.kinds {
		if w.suppressed == 0 && now.Sub(w.start) >= l.window {
			delete(l.mu.kinds, k)
		}
	}
	return len(l.mu.kinds) < maxKinds
}
