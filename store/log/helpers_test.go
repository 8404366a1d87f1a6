package log

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
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
	l, err := Open(e.fs, "/data/t-0", e.cfg, Options{Logger: testkit.Logger(e.t, slog.LevelDebug), Now: e.clk.Now, RecoveryPoint: rp})
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
