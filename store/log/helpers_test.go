package log

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/vfs"
)

// clock is a manual clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.UnixMilli(1_700_000_000_000)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *clock) Ms() int64 { return c.Now().UnixMilli() }

// testLogger routes log output to t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(&tlogHandler{t: t})
}

type tlogHandler struct {
	t     testing.TB
	attrs []slog.Attr
}

func (h *tlogHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *tlogHandler) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	b.WriteString(r.Level.String() + " " + r.Message)
	for _, a := range h.attrs {
		b.WriteString(" " + a.String())
	}
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	h.t.Log(b.String())
	return nil
}
func (h *tlogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &tlogHandler{t: h.t, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}
func (h *tlogHandler) WithGroup(string) slog.Handler { return h }

type env struct {
	t   testing.TB
	fs  *vfs.MemFS
	clk *clock
	cfg Config
}

func newEnv(t testing.TB) *env {
	return &env{t: t, fs: vfs.NewMem(), clk: newClock(), cfg: DefaultConfig()}
}

func (e *env) open(rp int64) *Log {
	e.t.Helper()
	l, err := Open(e.fs, "/data/t-0", e.cfg, Options{Logger: testLogger(e.t), Now: e.clk.Now, RecoveryPoint: rp})
	if err != nil {
		e.t.Fatalf("open: %v", err)
	}
	return l
}

// batch builds an uncompressed batch of n records of size bytes at the clock's time.
func (e *env) batch(n, size int) []byte {
	return logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.Ms()}, logtest.Values(n, size)...)
}

func mustAppend(t testing.TB, l *Log, b []byte, epoch int32) AppendResult {
	t.Helper()
	r, err := l.Append(b, epoch)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return r
}

// readAllBatches reads the whole log batch by batch from start.
func readAllBatches(t testing.TB, l *Log) [][]byte {
	t.Helper()
	var out [][]byte
	off := l.StartOffset()
	for off < l.EndOffset() {
		b, err := l.Read(nil, off, 1, l.EndOffset(), true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		bs := logtest.Split(b)
		if len(bs) != 1 {
			t.Fatalf("read at %d: %d batches", off, len(bs))
		}
		out = append(out, bs[0])
		off = logtest.BaseOffset(bs[0]) + int64(logtest.RecordCount(bs[0]))
	}
	return out
}
