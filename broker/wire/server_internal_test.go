package wire

import (
	"context"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// failingListener fails every Accept as a process out of file
// descriptors does, until it is closed. Past maxFailingAccepts calls it
// blocks until closed instead, so that a caller spinning on it cannot
// hang a test.
const maxFailingAccepts = 1000

type failingListener struct {
	closed chan struct{}
	once   sync.Once
	mu     struct {
		sync.Mutex
		calls int
	}
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.mu.calls++
	spun := l.mu.calls > maxFailingAccepts
	l.mu.Unlock()
	if spun {
		<-l.closed
	}
	select {
	case <-l.closed:
		return nil, net.ErrClosed
	default:
	}
	return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
}

func (l *failingListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *failingListener) Addr() net.Addr { return &net.TCPAddr{} }

func (l *failingListener) calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.calls
}

// countingHandler counts the records logged through it.
type countingHandler struct {
	slog.Handler
	mu    sync.Mutex
	lines int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *countingHandler) Handle(context.Context, slog.Record) error {
	h.mu.Lock()
	h.lines++
	h.mu.Unlock()
	return nil
}

// A failing Accept is retried after 5 ms, doubling to 1 s, as net/http's
// Server.Serve does, and each failure logs one line: not a spin that logs
// ~270,000 lines a second (issue 9, open files without a cap).
func TestAcceptBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := &failingListener{closed: make(chan struct{})}
		h := &countingHandler{Handler: slog.DiscardHandler}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			_, err := accept(ctx, ln, slog.New(h))
			done <- err
		}()

		// Attempts at 0, 5, 15, 35, 75, 155, 315 and 635 ms, then one
		// a second. Inside the synctest bubble time is virtual: each Sleep
		// moves the fake clock exactly that far once every goroutine is
		// blocked, and synctest.Wait returns when the accept loop is blocked
		// again, so the counts are exact, not hoped for.
		time.Sleep(time.Second)
		synctest.Wait()
		if got := ln.calls(); got != 8 {
			t.Errorf("%d accepts in the first second, want 8", got)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := ln.calls(); got != 18 {
			t.Errorf("%d accepts in 11 s, want 18", got)
		}
		h.mu.Lock()
		if h.lines != ln.calls() {
			t.Errorf("%d lines logged for %d failed accepts", h.lines, ln.calls())
		}
		h.mu.Unlock()

		cancel()
		ln.Close()
		if err := <-done; err == nil {
			t.Fatal("accept returned no error once its context was done")
		}
	})
}
