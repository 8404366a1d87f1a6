package log

import (
	"errors"
	"fmt"
	"log/slog"
	"path"
	"sync"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// TestManagerCapsOpenFiles: 20 partitions of 5 segments each (400 segment
// files) behind a cap of 8 open files. Appending, reading every batch back,
// concurrent readers and flushes, a clean restart and a recovery after a
// crash (every segment re-scanned) never have more than 8 files open at
// once — counted by the MemFS under the Manager — and every batch reads
// back as written.
func TestManagerCapsOpenFiles(t *testing.T) {
	const (
		maxOpen    = 8
		partitions = 20
		segments   = 5
	)
	fsys, clk := vfs.NewMem(), newClock()
	cfg := DefaultConfig()
	cfg.SegmentBytes = 200 // every batch below gets a segment of its own
	open := func(fsys *vfs.MemFS) *Manager {
		t.Helper()
		m, err := OpenManager(fsys, "/data", ManagerOptions{
			Logger: testkit.Logger(t, slog.LevelInfo), Now: clk.Now,
			ConfigFor: func(string) Config { return cfg }, MaxOpenFiles: maxOpen,
		})
		if err != nil {
			t.Fatalf("open manager: %v", err)
		}
		return m
	}
	value := func(p, s int) []byte { return fmt.Appendf(nil, "partition %02d segment %d %0100d", p, s, 0) }
	checkAll := func(m *Manager) {
		t.Helper()
		for p := range partitions {
			l := m.Get("t", int32(p))
			if l == nil {
				t.Fatalf("partition %d missing", p)
			}
			if n := len(l.Segments()); n < segments {
				t.Fatalf("partition %d has %d segments, want %d or more", p, n, segments)
			}
			// Backwards, so that the oldest segments are read last, long
			// after their files were closed.
			for s := segments - 1; s >= 0; s-- {
				b, err := l.Read(nil, int64(s), 1<<20, l.EndOffset(), true)
				if err != nil {
					t.Fatalf("partition %d: read offset %d: %v", p, s, err)
				}
				bs := logtest.Split(b)
				if len(bs) != 1 || logtest.BaseOffset(bs[0]) != int64(s) {
					t.Fatalf("partition %d: read offset %d: %d batches", p, s, len(bs))
				}
			}
			for s, b := range readAllBatches(t, l)[:segments] {
				want := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Record{Value: value(p, s)})
				if string(b[record.HeaderSize:]) != string(want[record.HeaderSize:]) { // the records
					t.Fatalf("partition %d: batch %d reads back other records", p, s)
				}
			}
		}
		if _, peak := fsys.OpenFiles(); peak > maxOpen {
			t.Fatalf("%d files open at once under a cap of %d", peak, maxOpen)
		}
	}

	m := open(fsys)
	for p := range partitions {
		l, err := m.Create("t", int32(p), [16]byte{1}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for s := range segments {
			mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Record{Value: value(p, s)}), 0)
		}
	}
	checkAll(m)
	// Readers of every partition at once, with a writer, share the cap.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for p := range partitions {
				l := m.Get("t", int32((p+g*5)%partitions))
				if _, err := l.Read(nil, 0, 1<<20, l.EndOffset(), true); err != nil {
					t.Errorf("concurrent read: %v", err)
				}
			}
		})
	}
	wg.Go(func() {
		for p := range partitions {
			if err := m.Get("t", int32(p)).Flush(); err != nil {
				t.Errorf("concurrent flush: %v", err)
			}
		}
	})
	wg.Wait()
	if _, peak := fsys.OpenFiles(); peak > maxOpen {
		t.Fatalf("%d files open at once under a cap of %d", peak, maxOpen)
	}
	if got, _ := m.OpenFiles(); got > maxOpen {
		t.Fatalf("manager counts %d open files", got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if open, _ := fsys.OpenFiles(); open != 0 {
		t.Fatalf("%d files still open after Close", open)
	}

	m = open(fsys) // clean: indexes loaded, nothing re-scanned
	checkAll(m)
	mustAppend(t, m.Get("t", 0), // a sixth segment, kept by the crash below
		logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(1, 10)...), 0)

	fsys = fsys.CrashClone() // unclean: every segment re-scanned
	m = open(fsys)
	checkAll(m)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadSegmentDroppedWhileClosed: a reader that pinned a segment whose
// file the cache had closed finds it gone when retention drops the segment
// before the reopen; the read goes on from the log as it now is (here: the
// offset is below the new log start) instead of failing with the missing
// file.
func TestReadSegmentDroppedWhileClosed(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 200
	mem := e.fs
	l, err := Open(vfs.LimitOpen(mem, 2), "/data/t-0", e.cfg, Options{Logger: testkit.Logger(t, slog.LevelDebug), Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 3 {
		mustAppend(t, l, e.batch(1, 150), 0)
	}
	first := path.Join("/data/t-0", segmentName(0, ".log"))
	var once sync.Once
	mem.InjectError(func(op vfs.Op, name string) error {
		if op == vfs.OpOpen && name == first {
			once.Do(func() {
				if err := l.SetStartOffset(1); err != nil {
					t.Errorf("set start offset: %v", err)
				}
			})
		}
		return nil
	})
	_, err = l.Read(nil, 0, 1<<20, l.EndOffset(), true)
	if !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read of the dropped segment: %v, want ErrOffsetOutOfRange", err)
	}
	mem.InjectError(nil)
	if b, err := l.Read(nil, 1, 1<<20, l.EndOffset(), true); err != nil || len(logtest.Split(b)) != 1 {
		t.Fatalf("read at the new log start: %d bytes, %v", len(b), err)
	}
}
