package log

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"path"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/vfs"
)

func openManager(t *testing.T, fsys vfs.FS, clk *testkit.Clock, cfg Config) *Manager {
	t.Helper()
	m, err := OpenManager(fsys, "/data", ManagerOptions{Logger: testkit.Logger(t, slog.LevelDebug), Now: clk.Now, ConfigFor: func(string) Config { return cfg }})
	if err != nil {
		t.Fatalf("open manager: %v", err)
	}
	return m
}

func TestManagerLifecycle(t *testing.T) {
	fsys, clk, cfg := vfs.NewMem(), newClock(), DefaultConfig()
	m := openManager(t, fsys, clk, cfg)
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	l, err := m.Create("orders", 3, id, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l2, err := m.Create("orders", 3, id, cfg); err != nil || l2 != l {
		t.Fatalf("create not idempotent")
	}
	if _, err := m.Create("../x", 0, id, cfg); err == nil {
		t.Fatalf("path escape accepted")
	}
	other, _ := m.Create("my-topic", 0, id, cfg)
	b := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(4, 10)...)
	mustAppend(t, l, b, 0)
	mustAppend(t, other, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(2, 10)...), 0)
	if err := other.SetStartOffset(1); err != nil {
		t.Fatal(err)
	}
	meta, _ := readFile(fsys, "/data/orders-3/"+PartitionMetadataFile, 100)
	if string(meta) != "version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA" {
		t.Fatalf("partition.metadata %q", meta)
	}
	// Unrelated entries are ignored on open.
	if f, err := fsys.Create("/data/README"); err == nil {
		_ = f.Close()
	}
	_ = fsys.MkdirAll("/data/lost+found")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	rp, _ := readFile(fsys, "/data/"+RecoveryPointCheckpoint, 1000)
	if string(rp) != "0\n2\nmy-topic 0 2\norders 3 4\n" {
		t.Fatalf("recovery point checkpoint %q", rp)
	}
	ls, _ := readFile(fsys, "/data/"+LogStartOffsetCheckpoint, 1000)
	if string(ls) != "0\n2\nmy-topic 0 1\norders 3 0\n" {
		t.Fatalf("log start checkpoint %q", ls)
	}
	if _, err := fsys.Stat("/data/" + CleanShutdownFile); err != nil {
		t.Fatalf("no clean shutdown marker: %v", err)
	}

	m = openManager(t, fsys, clk, cfg)
	if _, err := fsys.Stat("/data/" + CleanShutdownFile); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("marker kept after open: %v", err)
	}
	logs := m.Logs()
	if len(logs) != 2 {
		t.Fatalf("%d logs", len(logs))
	}
	l = m.Get("orders", 3)
	if l == nil || l.EndOffset() != 4 {
		t.Fatalf("orders-3 not recovered")
	}
	if got := readAllBatches(t, l); len(got) != 1 || !bytes.Equal(got[0], b) {
		t.Fatalf("data lost")
	}
	if s := m.Get("my-topic", 0).StartOffset(); s != 1 {
		t.Fatalf("log start %d", s)
	}
	if got, ok := m.TopicID("orders", 3); !ok || got != id {
		t.Fatalf("topic id %v %v", got, ok)
	}
	if err := m.Delete("orders", 3); err != nil {
		t.Fatal(err)
	}
	if m.Get("orders", 3) != nil {
		t.Fatal("deleted log still there")
	}
	if _, err := fsys.Stat("/data/orders-3"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dir not removed: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestManagerUncleanRecovery(t *testing.T) {
	fsys, clk, cfg := vfs.NewMem(), newClock(), DefaultConfig()
	m := openManager(t, fsys, clk, cfg)
	l, _ := m.Create("t", 0, [16]byte{9}, cfg)
	for range 3 {
		mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(2, 10)...), 0)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(2, 10)...), 0)
	crashed := fsys.CrashClone() // no marker, last append unsynced
	_ = m.Close()
	m = openManager(t, crashed, clk, cfg)
	defer m.Close()
	l = m.Get("t", 0)
	if l == nil || l.EndOffset() != 6 {
		t.Fatalf("recovered end %v", l)
	}
	if id, ok := m.TopicID("t", 0); !ok || id != [16]byte{9} {
		t.Fatalf("topic id lost")
	}
}

func TestManagerMaintain(t *testing.T) {
	fsys, clk, cfg := vfs.NewMem(), newClock(), DefaultConfig()
	cfg.SegmentMs = 1000
	cfg.RetentionMs = 5000
	cfg.FlushMs = 100
	m := openManager(t, fsys, clk, cfg)
	defer m.Close()
	l, _ := m.Create("t", 0, [16]byte{}, cfg)
	mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(1, 10)...), 0)
	clk.Advance(200 * time.Millisecond)
	m.Maintain(clk.Now())
	if l.RecoveryPoint() != 1 {
		t.Fatalf("flush.ms did not flush: %d", l.RecoveryPoint())
	}
	clk.Advance(2 * time.Second)
	m.Maintain(clk.Now())
	if n := len(l.Segments()); n != 2 {
		t.Fatalf("segment.ms: %d segments", n)
	}
	clk.Advance(10 * time.Second)
	m.Maintain(clk.Now())
	if n := len(l.Segments()); n != 2 || l.StartOffset() != 0 {
		t.Fatalf("Maintain applied retention: %d segments, start %d", n, l.StartOffset())
	}
	m.ApplyRetention(clk.Now())
	if n := len(l.Segments()); n != 1 || l.StartOffset() != 1 {
		t.Fatalf("retention: %d segments, start %d", n, l.StartOffset())
	}
	rp, _ := readFile(fsys, "/data/"+LogStartOffsetCheckpoint, 1000)
	if string(rp) != "0\n1\nt 0 1\n" {
		t.Fatalf("checkpoint %q", rp)
	}
}

func TestCheckpointParsing(t *testing.T) {
	m := map[TopicPartition]int64{{"a", 0}: 5, {"b-c", 12}: 0}
	fsys := vfs.NewMem()
	_ = fsys.MkdirAll("/d")
	if err := writeFileAtomic(fsys, "/d/cp", encodeOffsetCheckpoint(m)); err != nil {
		t.Fatal(err)
	}
	got, err := readOffsetCheckpoint(fsys, "/d/cp")
	if err != nil || len(got) != 2 || got[TopicPartition{"b-c", 12}] != 0 || got[TopicPartition{"a", 0}] != 5 {
		t.Fatalf("round trip %v %v", got, err)
	}
	for _, bad := range []string{"1\n0\n", "1\n", "0\n2\na 0 1\n", "0\n1\na x 1\n", "0\n1\na 0 -4\n"} {
		if _, err := parseCheckpointOffsets(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// Kafka's CheckpointFile reads a file that ends before the count as
	// empty; Kafka creates cleaner-offset-checkpoint with no bytes.
	for _, empty := range []string{"", "0\n"} {
		if got, err := parseCheckpointOffsets(empty); err != nil || len(got) != 0 {
			t.Errorf("%q: %v %v, want no entries", empty, got, err)
		}
	}
	for _, c := range []struct {
		in string
		ok bool
		tp TopicPartition
	}{{"a-0", true, TopicPartition{"a", 0}}, {"a-b-10", true, TopicPartition{"a-b", 10}}, {"a", false, TopicPartition{}}, {"a-01", false, TopicPartition{}}, {"-1", false, TopicPartition{}}, {"a-", false, TopicPartition{}}} {
		tp, ok := parsePartitionDir(c.in)
		if ok != c.ok || tp != c.tp {
			t.Errorf("%q: %v %v", c.in, tp, ok)
		}
	}
	if _, err := parsePartitionMetadata([]byte("version: 0\ntopic_id: zz\n")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad topic id accepted")
	}
}

func parseCheckpointOffsets(s string) (map[TopicPartition]int64, error) {
	fsys := vfs.NewMem()
	f, _ := fsys.Create("/cp")
	_, _ = f.Write([]byte(s))
	_ = f.Close()
	return readOffsetCheckpoint(fsys, "/cp")
}

// TestManagerHighWatermarkCheckpoint: replication-offset-checkpoint is
// written in Kafka's format (version 0, count, "topic partition offset"
// lines) and read back at the next open; a deleted partition forgets its
// entry, so one created again under its name starts afresh.
func TestManagerHighWatermarkCheckpoint(t *testing.T) {
	fsys, clk, cfg := vfs.NewMem(), newClock(), DefaultConfig()
	m := openManager(t, fsys, clk, cfg)
	if _, ok := m.CheckpointedHighWatermark("orders", 0); ok {
		t.Fatal("a high watermark before any checkpoint")
	}
	hws := map[TopicPartition]int64{{"orders", 0}: 17, {"orders", 1}: 0, {"audit", 2}: 5}
	if err := m.CheckpointHighWatermarks(hws); err != nil {
		t.Fatal(err)
	}
	b, _ := readFile(fsys, "/data/"+ReplicationOffsetCheckpoint, 1000)
	if string(b) != "0\n3\naudit 2 5\norders 0 17\norders 1 0\n" {
		t.Fatalf("replication-offset-checkpoint %q", b)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckpointHighWatermarks(hws); !errors.Is(err, ErrClosed) {
		t.Fatalf("checkpoint after close: %v", err)
	}
	m = openManager(t, fsys, clk, cfg)
	defer m.Close()
	for tp, want := range hws {
		if got, ok := m.CheckpointedHighWatermark(tp.Topic, tp.Partition); !ok || got != want {
			t.Errorf("%v: high watermark %d %v, want %d", tp, got, ok, want)
		}
	}
	if err := m.Delete("orders", 0); err != nil {
		t.Fatal(err)
	}
	if hw, ok := m.CheckpointedHighWatermark("orders", 0); ok {
		t.Errorf("deleted partition keeps high watermark %d", hw)
	}
}

// TestIdleCheckpointWritesNothing checks that a checkpoint pass with
// nothing new writes no file: an idle node checkpoints every tick, and
// each write is a temporary file, two fsyncs and a rename. A pass after a
// change writes the file again, and a write that failed is retried.
func TestIdleCheckpointWritesNothing(t *testing.T) {
	fsys, clk, cfg := vfs.NewMem(), newClock(), DefaultConfig()
	m := openManager(t, fsys, clk, cfg)
	defer m.Close()
	renames := map[string]int{}
	var fail bool
	fsys.InjectError(func(op vfs.Op, name string) error {
		if op == vfs.OpRename {
			if fail {
				return errors.New("injected")
			}
			renames[path.Base(name)]++
		}
		return nil
	})
	l, err := m.Create("orders", 0, [16]byte{1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(3, 10)...), 0)
	hws := map[TopicPartition]int64{{"orders", 0}: 3}
	pass := func() {
		t.Helper()
		if err := errors.Join(m.Checkpoint(), m.CheckpointHighWatermarks(hws)); err != nil {
			t.Fatal(err)
		}
	}
	pass()
	want := map[string]int{RecoveryPointCheckpoint + ".tmp": 1, LogStartOffsetCheckpoint + ".tmp": 1, ReplicationOffsetCheckpoint + ".tmp": 1}
	check := func(when string) {
		t.Helper()
		for name, n := range want {
			if renames[name] != n {
				t.Errorf("%s: %s written %d times, want %d", when, name, renames[name], n)
			}
		}
	}
	check("first pass")
	for range 3 {
		pass()
	}
	check("idle passes")

	if err := l.SetStartOffset(1); err != nil {
		t.Fatal(err)
	}
	hws[TopicPartition{"orders", 0}] = 2
	fail = true
	if err := m.Checkpoint(); err == nil {
		t.Fatal("checkpoint with failing renames succeeded")
	}
	fail = false
	pass()
	want[LogStartOffsetCheckpoint+".tmp"]++
	want[ReplicationOffsetCheckpoint+".tmp"]++
	check("after a change and a failed write")
	b, _ := readFile(fsys, "/data/"+LogStartOffsetCheckpoint, 1000)
	if string(b) != "0\n1\norders 0 1\n" {
		t.Fatalf("log-start-offset-checkpoint %q", b)
	}
}
