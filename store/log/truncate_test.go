package log

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/vfs"
)

// TestTruncateCrashAtEveryStep: a truncation to an epoch boundary that
// fails at any file operation, followed by a crash, leaves a log that is a
// prefix of the original (never data past the target behind a gap), that
// reads back whole, and that a retried truncation brings to exactly the
// state of an undisturbed one: batches, epochs, producers, aborted
// transactions.
func TestTruncateCrashAtEveryStep(t *testing.T) {
	const target = 9
	build := func(t *testing.T, fsys *vfs.MemFS) (*Log, *testkit.Clock) {
		clk := newClock()
		cfg := DefaultConfig()
		cfg.SegmentBytes = 250
		cfg.IndexIntervalBytes = 100
		l, err := Open(fsys, "/data/t-0", cfg, Options{Logger: testkit.Logger(t, slog.LevelInfo), Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		seq := int32(0)
		for i := range 8 {
			epoch := int32(i / 3)
			b := logtest.ProducerBatch(clk.UnixMilli(), 5, 0, seq, 2, true)
			seq += 2
			mustAppend(t, l, b, epoch)
			if i%3 == 2 {
				if _, err := l.AppendMarker(Marker{ProducerID: 5, Commit: i%2 == 0}, epoch); err != nil {
					t.Fatal(err)
				}
			}
		}
		return l, clk
	}
	type state struct {
		batches  [][]byte
		epochs   []EpochEntry
		prods    []ProducerState
		aborted  []AbortedTxn
		end      int64
		segments int
	}
	stateOf := func(t *testing.T, l *Log) state {
		return state{readAllBatches(t, l), l.LeaderEpochs(), l.Producers(), l.AbortedTransactions(0, l.EndOffset()), l.EndOffset(), len(l.Segments())}
	}
	same := func(a, b state) bool {
		if len(a.batches) != len(b.batches) || a.end != b.end || a.segments != b.segments ||
			len(a.epochs) != len(b.epochs) || len(a.prods) != len(b.prods) || len(a.aborted) != len(b.aborted) {
			return false
		}
		for i := range a.batches {
			if !bytes.Equal(a.batches[i], b.batches[i]) {
				return false
			}
		}
		for i := range a.epochs {
			if a.epochs[i] != b.epochs[i] {
				return false
			}
		}
		for i := range a.prods {
			if a.prods[i] != b.prods[i] {
				return false
			}
		}
		for i := range a.aborted {
			if a.aborted[i] != b.aborted[i] {
				return false
			}
		}
		return true
	}

	fsys := vfs.NewMem()
	l, _ := build(t, fsys)
	orig := stateOf(t, l)
	if orig.segments < 4 {
		t.Fatalf("only %d segments", orig.segments)
	}
	if err := l.Truncate(target); err != nil {
		t.Fatal(err)
	}
	want := stateOf(t, l)
	if want.end > target || len(want.epochs) == len(orig.epochs) {
		t.Fatalf("truncation to %d: end %d, epochs %v", target, want.end, want.epochs)
	}
	_ = l.Close()

	for step := 1; ; step++ {
		fsys := vfs.NewMem()
		l, clk := build(t, fsys)
		n := 0
		fsys.InjectError(func(op vfs.Op, name string) error {
			if op == vfs.OpRead || op == vfs.OpOpen || op == vfs.OpList || op == vfs.OpStat || op == vfs.OpClose {
				return nil
			}
			if n++; n == step {
				return errors.New("injected")
			}
			return nil
		})
		err := l.Truncate(target)
		fsys.InjectError(nil)
		if n < step {
			// Every operation of the truncation has failed once.
			_ = l.Close()
			if err != nil || step < 10 {
				t.Fatalf("step %d: %v after %d operations", step, err, n)
			}
			break
		}
		if err == nil {
			t.Fatalf("step %d: the truncation hid the injected failure", step)
		}
		crashed := fsys.CrashClone()
		_ = l.Close()
		cfg := DefaultConfig()
		cfg.SegmentBytes = 250
		cfg.IndexIntervalBytes = 100
		// The node's checkpoint may still hold the recovery point of
		// before the truncation.
		l, err = Open(crashed, "/data/t-0", cfg, Options{Logger: testkit.Logger(t, slog.LevelInfo), Now: clk.Now, RecoveryPoint: orig.end})
		if err != nil {
			t.Fatalf("step %d: reopen: %v", step, err)
		}
		got := stateOf(t, l)
		if len(got.batches) > len(orig.batches) || got.end < want.end {
			t.Fatalf("step %d: %d batches ending at %d after the crash", step, len(got.batches), got.end)
		}
		for i := range got.batches {
			if !bytes.Equal(got.batches[i], orig.batches[i]) {
				t.Fatalf("step %d: batch %d is not the original's: the log is not a prefix", step, i)
			}
		}
		if err := l.Truncate(target); err != nil {
			t.Fatalf("step %d: retried truncation: %v", step, err)
		}
		if got := stateOf(t, l); !same(got, want) {
			t.Fatalf("step %d: after the retried truncation\n got %+v\nwant %+v", step, got, want)
		}
		_ = l.Close()
	}
}
