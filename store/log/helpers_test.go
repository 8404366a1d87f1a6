package log

import (
	"log/slog"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// newClock is the clock log tests start from.
func newClock() *testkit.Clock { return testkit.NewClock(time.UnixMilli(1_700_000_000_000)) }

type env struct {
	t   testing.TB
	fs  *vfs.MemFS
	clk *testkit.Clock
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
	return logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli()}, logtest.Values(n, size)...)
}

func mustAppend(t testing.TB, l *Log, b []byte, epoch int32) AppendResult {
	t.Helper()
	r, err := l.Append(b, epoch)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return r
}

// readAllBatches reads the whole log batch by batch from start, across
// the gaps of a compacted log.
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
		off = record.Batch(bs[0]).LastOffset() + 1
	}
	return out
}

// restartFS ends a run for a restart test: it closes with closeFn and
// returns e.fs when clean; else it returns a crash clone of e.fs (only the
// synced bytes) taken before closeFn, whose error is then ignored.
func (e *env) restartFS(clean bool, closeFn func() error) *vfs.MemFS {
	e.t.Helper()
	if clean {
		if err := closeFn(); err != nil {
			e.t.Fatal(err)
		}
		return e.fs
	}
	crashed := e.fs.CrashClone()
	_ = closeFn()
	return crashed
}
