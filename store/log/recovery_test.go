package log

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// buildLog writes n batches into a fresh MemFS log, closes it and returns
// the fs, the batches as stored and the active segment's file name.
func buildLog(t *testing.T, e *env, n int) [][]byte {
	t.Helper()
	l := e.open(0)
	var bs [][]byte
	for i := range n {
		b := e.batch(1+i%3, 30+i)
		mustAppend(t, l, b, 1)
		bs = append(bs, b)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return bs
}

// checkRecovered opens the damaged log with a recovery point of 0 (an
// unclean shutdown), and checks that exactly the batches before the damage
// survive and that appends work.
func checkRecovered(t *testing.T, e *env, want [][]byte) {
	t.Helper()
	l := e.open(0)
	defer l.Close()
	got := readAllBatches(t, l)
	if len(got) != len(want) {
		t.Fatalf("recovered %d batches, want %d", len(got), len(want))
	}
	var end int64
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("batch %d differs", i)
		}
		end = logtest.BaseOffset(want[i]) + int64(logtest.RecordCount(want[i]))
	}
	if l.EndOffset() != end {
		t.Fatalf("end offset %d, want %d", l.EndOffset(), end)
	}
	r, err := l.Append(e.batch(2, 5), 1)
	if err != nil || r.FirstOffset != end {
		t.Fatalf("append after recovery: %+v %v", r, err)
	}
	if got := readAllBatches(t, l); len(got) != len(want)+1 {
		t.Fatalf("after append: %d batches", len(got))
	}
}

func TestRecoveryTornTail(t *testing.T) {
	e := newEnv(t)
	e.cfg.IndexIntervalBytes = 50
	batches := buildLog(t, e, 6)
	logName := "/data/t-0/" + segmentName(0, ".log")
	orig, err := readFile(e.fs, logName, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	last := batches[len(batches)-1]
	lastPos := len(orig) - len(last)
	pristine := e.fs
	for cut := lastPos; cut < len(orig); cut++ {
		e.fs = pristine.CrashClone()
		f, err := e.fs.Open(logName)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(int64(cut)); err != nil {
			t.Fatal(err)
		}
		_ = f.Sync()
		_ = f.Close()
		t.Logf("cut at %d", cut)
		checkRecovered(t, e, batches[:len(batches)-1])
	}
}

func TestRecoveryCorruptTail(t *testing.T) {
	e := newEnv(t)
	e.cfg.IndexIntervalBytes = 50
	batches := buildLog(t, e, 6)
	logName := "/data/t-0/" + segmentName(0, ".log")
	orig, _ := readFile(e.fs, logName, 1<<20)
	last := batches[len(batches)-1]
	lastPos := len(orig) - len(last)
	pristine := e.fs
	was := record.Batch(orig[lastPos:])
	for p := lastPos; p < len(orig); p++ {
		// The low base offset bytes and the partition leader epoch precede
		// the CRC; a flip there is not detectable (recovery only checks
		// that offsets do not go backwards or overflow the segment).
		flipped := record.Batch(bytes.Clone(orig[lastPos:]))
		flipped[p-lastPos] ^= 0x5a
		lowOffset := flipped.BaseOffset() != was.BaseOffset() && flipped.BaseOffset()>>32 == was.BaseOffset()>>32
		if lowOffset || flipped.PartitionLeaderEpoch() != was.PartitionLeaderEpoch() {
			continue
		}
		e.fs = pristine.CrashClone()
		f, _ := e.fs.Open(logName)
		b := []byte{orig[p] ^ 0x5a}
		if _, err := f.WriteAt(b, int64(p)); err != nil {
			t.Fatal(err)
		}
		_ = f.Sync()
		_ = f.Close()
		checkRecovered(t, e, batches[:len(batches)-1])
	}
}

func TestRecoveryDropsSegmentsAfterDamage(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 300
	batches := buildLog(t, e, 8)
	names, _ := e.fs.List("/data/t-0")
	var logs []string
	for _, n := range names {
		if len(n) == 24 && n[20:] == ".log" {
			logs = append(logs, n)
		}
	}
	if len(logs) < 3 {
		t.Fatalf("%d segments", len(logs))
	}
	// Damage the first byte of the second segment: all later segments go.
	f, _ := e.fs.Open("/data/t-0/" + logs[1])
	_, _ = f.WriteAt([]byte{0xff}, 8)
	_ = f.Close()
	l := e.open(0)
	defer l.Close()
	if len(l.Segments()) != 2 {
		t.Fatalf("%d segments after recovery", len(l.Segments()))
	}
	got := readAllBatches(t, l)
	base, _ := parseSegmentName(logs[1][:20])
	var want [][]byte
	for _, b := range batches {
		if logtest.BaseOffset(b) < base {
			want = append(want, b)
		}
	}
	if len(got) != len(want) || l.EndOffset() != base {
		t.Fatalf("%d batches, end %d; want %d, %d", len(got), l.EndOffset(), len(want), base)
	}
}

func TestRecoveryRebuildsIndexes(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 2000
	e.cfg.IndexIntervalBytes = 100
	batches := buildLog(t, e, 20)
	// Corrupt the first segment's index and delete its time index; with a
	// clean recovery point it is not re-scanned but still checked.
	f, _ := e.fs.Open("/data/t-0/" + segmentName(0, ".index"))
	_, _ = f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, 0)
	_ = f.Close()
	_ = e.fs.Remove("/data/t-0/" + segmentName(0, ".timeindex"))
	l := e.open(1 << 40)
	defer l.Close()
	got := readAllBatches(t, l)
	if len(got) != len(batches) {
		t.Fatalf("%d batches", len(got))
	}
	for off := int64(0); off < l.EndOffset(); off++ {
		if _, err := l.Read(nil, off, 1, l.EndOffset(), true); err != nil {
			t.Fatal(err)
		}
	}
	if s := l.Segments()[0]; s.IndexEntries == 0 || s.TimeIndexEntries == 0 {
		t.Fatalf("indexes not rebuilt: %+v", s)
	}
}

func TestCrashCloneLosesUnsynced(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	for range 3 {
		mustAppend(t, l, e.batch(2, 20), 0)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if l.RecoveryPoint() != 6 {
		t.Fatalf("recovery point %d", l.RecoveryPoint())
	}
	for range 2 {
		mustAppend(t, l, e.batch(2, 20), 0)
	}
	crashed := e.fs.CrashClone()
	_ = l.Close()
	e.fs = crashed
	l = e.open(0)
	defer l.Close()
	if l.EndOffset() != 6 {
		t.Fatalf("end after crash %d, want 6 (synced part only)", l.EndOffset())
	}
	if n := len(readAllBatches(t, l)); n != 3 {
		t.Fatalf("%d batches", n)
	}
	if r := mustAppend(t, l, e.batch(1, 1), 0); r.FirstOffset != 6 {
		t.Fatalf("append at %d", r.FirstOffset)
	}
}

func TestCrashDuringRollKeepsSyncedData(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 300
	e.cfg.FlushMessages = 1 // fsync every append
	l := e.open(0)
	for range 10 {
		mustAppend(t, l, e.batch(1, 100), 0)
		crashed := e.fs.CrashClone()
		end := l.EndOffset()
		l2, err := Open(crashed, "/data/t-0", e.cfg, Options{Logger: testkit.Logger(t, slog.LevelDebug), Now: e.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if l2.EndOffset() != end {
			t.Fatalf("flushed data lost: end %d want %d", l2.EndOffset(), end)
		}
		_ = l2.Close()
	}
	_ = l.Close()
}

func TestStickyWriteError(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	mustAppend(t, l, e.batch(1, 10), 0)
	e.fs.InjectError(func(op vfs.Op, name string) error {
		if op == vfs.OpWrite {
			return vfs.ErrInjected
		}
		return nil
	})
	_, err := l.Append(e.batch(1, 10), 0)
	var ioe *IOError
	if !errors.As(err, &ioe) || !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("append: %v", err)
	}
	e.fs.InjectError(nil)
	// Sticky: the fault is gone but the log refuses writes.
	if _, err := l.Append(e.batch(1, 10), 0); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("second append: %v", err)
	}
	if err := l.Flush(); !errors.As(err, &ioe) {
		t.Fatalf("flush: %v", err)
	}
	// Reads still work.
	if got := readAllBatches(t, l); len(got) != 1 {
		t.Fatalf("%d batches", len(got))
	}
}

func TestStickySyncError(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	mustAppend(t, l, e.batch(1, 10), 0)
	syncs := 0
	e.fs.InjectError(func(op vfs.Op, name string) error {
		if op == vfs.OpSync {
			syncs++
			return vfs.ErrInjected
		}
		return nil
	})
	if err := l.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("flush: %v", err)
	}
	if syncs != 1 {
		t.Fatalf("%d fsync attempts", syncs)
	}
	e.fs.InjectError(nil)
	if err := l.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("fsync retried: %v", err)
	}
	if _, err := l.Append(e.batch(1, 10), 0); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("append after failed fsync: %v", err)
	}
	if syncs != 1 {
		t.Fatalf("fsync retried: %d", syncs)
	}
}

func TestFlushMessages(t *testing.T) {
	e := newEnv(t)
	e.cfg.FlushMessages = 5
	l := e.open(0)
	defer l.Close()
	mustAppend(t, l, e.batch(3, 10), 0)
	if l.RecoveryPoint() != 0 {
		t.Fatalf("flushed early")
	}
	mustAppend(t, l, e.batch(3, 10), 0)
	if l.RecoveryPoint() != 6 {
		t.Fatalf("recovery point %d after flush.messages", l.RecoveryPoint())
	}
}

func TestRecoveryRebuildsLeaderEpochs(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	mustAppend(t, l, e.batch(2, 10), 1)
	mustAppend(t, l, e.batch(2, 10), 4)
	mustAppend(t, l, e.batch(2, 10), 4)
	mustAppend(t, l, e.batch(1, 10), 7)
	_ = l.Close()
	if err := e.fs.Remove("/data/t-0/" + LeaderEpochCheckpointFile); err != nil {
		t.Fatal(err)
	}
	l = e.open(0) // unclean: everything re-scanned
	defer l.Close()
	want := []EpochEntry{{1, 0}, {4, 2}, {7, 6}}
	if got := l.LeaderEpochs(); !equalEpochs(got, want) {
		t.Fatalf("epochs %v", got)
	}
	b, err := readFile(e.fs, "/data/t-0/"+LeaderEpochCheckpointFile, 1000)
	if err != nil || string(b) != "0\n3\n1 0\n4 2\n7 6\n" {
		t.Fatalf("checkpoint not rewritten: %q %v", b, err)
	}
}
