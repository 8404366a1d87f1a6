package log

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// compactEnv is an env whose log is compacted, in small segments, and
// fsynced on every append (so that a power-loss crash keeps every append
// and only the cleaner's steps are in question).
func compactEnv(t testing.TB) *env {
	e := newEnv(t)
	e.cfg.CleanupPolicy = CleanupCompact
	e.cfg.SegmentBytes = 600
	e.cfg.IndexIntervalBytes = 100
	e.cfg.FlushMessages = 1
	e.cfg.DeleteRetentionMs = 1000
	return e
}

// kv is one record of a keyed write; a nil value is a tombstone.
type kv struct{ k, v string }

// appendKV appends one batch of the records with codec.
func (e *env) appendKV(l *Log, codec int8, recs ...kv) {
	e.t.Helper()
	rs := make([]logtest.Record, len(recs))
	for i, r := range recs {
		rs[i] = logtest.Record{Key: []byte(r.k)}
		if r.v != "" {
			rs[i].Value = []byte(r.v)
		}
	}
	mustAppend(e.t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli(), Compression: codec}, rs...), 0)
}

// logRecord is one record read back.
type logRecord struct {
	offset    int64
	key       string
	value     string
	tombstone bool
	batch     record.Batch
}

// readRecords reads the whole log from its start across gaps, checks every
// batch's CRC and that offsets strictly increase, and returns its records.
func readRecords(t testing.TB, l *Log) []logRecord {
	t.Helper()
	var dec record.Decompressor
	defer dec.Close()
	var out []logRecord
	last := int64(-1)
	for _, raw := range readAllBatches(t, l) {
		b, err := record.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.CheckCRC(); err != nil {
			t.Fatalf("batch %d: %v", b.BaseOffset(), err)
		}
		if b.BaseOffset() <= last {
			t.Fatalf("batch %d after offset %d", b.BaseOffset(), last)
		}
		it, err := b.Records(&dec)
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			r := it.Record()
			o := b.BaseOffset() + int64(r.OffsetDelta)
			if o <= last || o > b.LastOffset() {
				t.Fatalf("record offset %d after %d (batch %d-%d)", o, last, b.BaseOffset(), b.LastOffset())
			}
			last = o
			out = append(out, logRecord{offset: o, key: string(r.Key), value: string(r.Value), tombstone: r.Value == nil, batch: append(record.Batch(nil), b...)})
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		last = max(last, b.LastOffset())
	}
	return out
}

// latest maps each key to its last record in the log.
func latest(rs []logRecord) map[string]logRecord {
	m := map[string]logRecord{}
	for _, r := range rs {
		m[r.key] = r
	}
	return m
}

func (e *env) clean(l *Log) CleanResult {
	e.t.Helper()
	res, err := l.Clean(CleanOptions{Now: e.clk.Now(), UpperBound: l.EndOffset(), MapBytes: 1 << 20})
	if err != nil {
		e.t.Fatalf("clean: %v", err)
	}
	return res
}

func TestCleanKeepsLatestPerKey(t *testing.T) {
	e := compactEnv(t)
	l := e.open(0)
	defer l.Close()
	for round := range 20 {
		for k := range 5 {
			e.appendKV(l, 0, kv{fmt.Sprintf("k%d", k), fmt.Sprintf("v%d-%d", k, round)})
		}
	}
	before := len(l.Segments())
	activeBase := l.Segments()[before-1].BaseOffset
	end := l.EndOffset()
	res := e.clean(l)
	if !res.Cleaned || res.RecordsRemoved == 0 || res.BytesRemoved <= 0 {
		t.Fatalf("clean: %+v", res)
	}
	segs := l.Segments()
	if len(segs) != before || segs[len(segs)-1].BaseOffset != activeBase || l.EndOffset() != end {
		t.Fatalf("segments %d -> %d, active %d (was %d), end %d", before, len(segs), segs[len(segs)-1].BaseOffset, activeBase, l.EndOffset())
	}
	rs := readRecords(t, l)
	got := latest(rs)
	for k := range 5 {
		if r := got[fmt.Sprintf("k%d", k)]; r.value != fmt.Sprintf("v%d-19", k) {
			t.Fatalf("k%d: %+v", k, r)
		}
	}
	// Below the active segment, one record per key is left.
	seen := map[string]int{}
	for _, r := range rs {
		if r.offset < activeBase {
			seen[r.key]++
			if seen[r.key] > 1 {
				t.Fatalf("key %s twice below the active segment", r.key)
			}
		}
	}
	st := l.CleanerState(e.clk.Now(), l.EndOffset())
	if st.FirstDirtyOffset != activeBase || st.Runs != 1 || st.RecordsRemoved != res.RecordsRemoved || st.DirtyRatio != 0 {
		t.Fatalf("state %+v", st)
	}
	// Nothing new: a second pass finds no dirty section.
	if res := e.clean(l); res.Cleaned {
		t.Fatalf("second clean: %+v", res)
	}
	// The next pass groups the small cleaned segments into one (they are
	// grouped by their sizes before cleaning, as in Kafka).
	for round := range 20 {
		for k := range 5 {
			e.appendKV(l, 0, kv{fmt.Sprintf("k%d", k), fmt.Sprintf("v%d-%d", k, 20+round)})
		}
	}
	before = len(l.Segments())
	e.clean(l)
	if after := len(l.Segments()); after > before-before/3 {
		t.Fatalf("second pass: %d segments -> %d", before, after)
	}
	if l.Segments()[0].Size > e.cfg.SegmentBytes {
		t.Fatalf("grouped segment of %d bytes", l.Segments()[0].Size)
	}
	// A consumer at an offset inside a removed gap reads on from the next
	// offset held.
	b, err := l.Read(nil, 1, 1<<20, l.EndOffset(), true)
	if err != nil || len(b) == 0 || logtest.BaseOffset(b) <= 1 && record.Batch(b).LastOffset() < 1 {
		t.Fatalf("read in gap: %v, %d bytes", err, len(b))
	}
}

func TestCleanRespectsBounds(t *testing.T) {
	e := compactEnv(t)
	e.cfg.MinCompactionLagMs = 60_000
	l := e.open(0)
	defer l.Close()
	for round := range 10 {
		e.appendKV(l, 0, kv{"a", fmt.Sprint(round)}, kv{"b", fmt.Sprint(round)})
	}
	// Every segment is newer than min.compaction.lag.ms.
	if res := e.clean(l); res.Cleaned {
		t.Fatalf("cleaned within min.compaction.lag.ms: %+v", res)
	}
	e.clk.Advance(61 * time.Second)
	// The upper bound (high watermark) stops the pass.
	segs := l.Segments()
	bound := segs[1].BaseOffset
	res, err := l.Clean(CleanOptions{Now: e.clk.Now(), UpperBound: bound, MapBytes: 1 << 20})
	if err != nil || !res.Cleaned || res.End > bound {
		t.Fatalf("clean below %d: %+v %v", bound, res, err)
	}
	// Below the bound the latest a and b of that section are left; from
	// it on, everything.
	if n := len(readRecords(t, l)); n != 2+20-int(bound) {
		t.Fatalf("%d records left after cleaning below %d", n, bound)
	}
}

func TestCleanTombstonesAfterDeleteRetention(t *testing.T) {
	e := compactEnv(t)
	l := e.open(0)
	defer l.Close()
	e.appendKV(l, 0, kv{"a", "1"}, kv{"b", "1"})
	e.appendKV(l, 0, kv{"a", ""}) // tombstone
	for i := range 20 {
		e.appendKV(l, 0, kv{"c", fmt.Sprint(i)})
	}
	e.clean(l)
	got := latest(readRecords(t, l))
	if r, ok := got["a"]; !ok || !r.tombstone || !r.batch.Attributes().DeleteHorizon() {
		t.Fatalf("first pass: tombstone %+v (present %v)", r, ok)
	}
	if got["b"].value != "1" {
		t.Fatalf("b: %+v", got["b"])
	}
	// Before the horizon a second pass keeps it; after, it goes.
	for i := range 20 {
		e.appendKV(l, 0, kv{"c", fmt.Sprint(i)})
	}
	e.clean(l)
	if _, ok := latest(readRecords(t, l))["a"]; !ok {
		t.Fatal("tombstone removed before delete.retention.ms")
	}
	e.clk.Advance(2 * time.Second)
	for i := range 20 {
		e.appendKV(l, 0, kv{"c", fmt.Sprint(i)})
	}
	res := e.clean(l)
	if _, ok := latest(readRecords(t, l))["a"]; ok || res.TombstonesRemoved != 1 {
		t.Fatalf("tombstone kept after delete.retention.ms: %+v", res)
	}
}

func TestCleanEveryCodec(t *testing.T) {
	for _, codec := range []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
		t.Run(codec.String(), func(t *testing.T) {
			e := compactEnv(t)
			l := e.open(0)
			defer l.Close()
			for round := range 15 {
				e.appendKV(l, int8(codec), kv{"x", fmt.Sprint("x", round)}, kv{fmt.Sprint("u", round), "once"}, kv{"y", fmt.Sprint("y", round)})
			}
			res := e.clean(l)
			if !res.Cleaned || res.RecordsRemoved == 0 {
				t.Fatalf("clean: %+v", res)
			}
			rs := readRecords(t, l)
			got := latest(rs)
			if got["x"].value != "x14" || got["y"].value != "y14" || len(got) != 17 {
				t.Fatalf("after clean: %d keys, x %q y %q", len(got), got["x"].value, got["y"].value)
			}
			rewritten := 0
			for _, r := range rs {
				if c := r.batch.Attributes().Compression(); c != codec {
					t.Fatalf("batch %d has codec %v", r.batch.BaseOffset(), c)
				}
				if int(r.batch.RecordCount()) < 3 {
					rewritten++
				}
			}
			if rewritten == 0 {
				t.Fatal("no batch was rewritten")
			}
		})
	}
}

func TestCleanTransactions(t *testing.T) {
	e := compactEnv(t)
	l := e.open(0)
	defer l.Close()
	txn := func(pid int64, seq int32, k, v string) {
		mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli(), ProducerID: pid, BaseSequence: seq, Transactional: true},
			logtest.Record{Key: []byte(k), Value: []byte(v)}), 0)
	}
	txn(7, 0, "committed", "yes")
	txn(8, 0, "aborted", "no")
	txn(8, 1, "committed", "overwritten-by-abort?")
	if _, err := l.AppendMarker(Marker{ProducerID: 8, Commit: false}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendMarker(Marker{ProducerID: 7, Commit: true}, 0); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		e.appendKV(l, 0, kv{"filler", fmt.Sprint(i)})
	}
	if l.FirstUnstableOffset() != -1 {
		t.Fatal("transaction left open")
	}
	e.clean(l)
	got := latest(readRecords(t, l))
	if _, ok := got["aborted"]; ok {
		t.Fatal("aborted record kept")
	}
	if got["committed"].value != "yes" {
		t.Fatalf("committed: %+v (an aborted write must not supersede it)", got["committed"])
	}
	// The markers stay while their transactions have data or before their
	// horizon; the abort marker's transaction lost its data in the first
	// pass, so after delete.retention.ms a later pass drops it.
	markers := func() (n int) {
		for _, b := range readAllBatches(t, l) {
			if record.Batch(b).Attributes().Control() && record.Batch(b).RecordCount() > 0 {
				n++
			}
		}
		return n
	}
	if markers() != 2 {
		t.Fatalf("%d markers after the first pass", markers())
	}
	e.clk.Advance(2 * time.Second)
	for i := range 30 {
		e.appendKV(l, 0, kv{"filler", fmt.Sprint(i)})
	}
	e.clean(l)
	e.clk.Advance(2 * time.Second)
	for i := range 30 {
		e.appendKV(l, 0, kv{"filler", fmt.Sprint(i)})
	}
	res := e.clean(l)
	if markers() != 1 || res.MarkersRemoved != 1 {
		t.Fatalf("%d markers after delete.retention.ms (want the commit, whose data is left)", markers())
	}
	if got := latest(readRecords(t, l)); got["committed"].value != "yes" {
		t.Fatalf("committed after the last pass: %+v", got["committed"])
	}
	// Reopened, the log and its producer state load from the cleaned files.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open(0)
	if got := latest(readRecords(t, l)); got["committed"].value != "yes" {
		t.Fatalf("after reopen: %+v", got["committed"])
	}
}

// model is what a compacted log must yield: per key its latest value, ""
// for a tombstone (which may be gone).
type model map[string]string

func (m model) check(t testing.TB, l *Log, when string) {
	t.Helper()
	got := latest(readRecords(t, l))
	for k, v := range m {
		r, ok := got[k]
		switch {
		case v == "" && ok && !r.tombstone:
			t.Fatalf("%s: deleted key %s reads %q", when, k, r.value)
		case v != "" && (!ok || r.value != v):
			t.Fatalf("%s: key %s reads %+v, want %q", when, k, r, v)
		}
	}
	for k := range got {
		if _, ok := m[k]; !ok {
			t.Fatalf("%s: key %s never written", when, k)
		}
	}
}

// cleanCrashingAt runs a pass on l, whose files are fsys, failing its k-th
// file-system operation; power and kill are fsys as a power loss and as a
// killed process would leave it just before that operation, nil when the
// pass made fewer operations.
func cleanCrashingAt(l *Log, fsys *vfs.MemFS, k int, now time.Time) (power, kill *vfs.MemFS, err error) {
	n := 0
	fsys.InjectError(func(vfs.Op, string) error {
		if n++; n == k {
			power, kill = fsys.CrashClone(), fsys.Clone()
			return vfs.ErrInjected
		}
		return nil
	})
	_, err = l.Clean(CleanOptions{Now: now, UpperBound: l.EndOffset(), MapBytes: 1 << 20})
	fsys.InjectError(nil)
	return power, kill, err
}

// TestCleanCrashAtEveryStep crashes a pass at each file-system operation
// it makes, once keeping only what was synced (power loss) and once
// everything written (process killed), and reopens the log: it must hold
// every key's latest value, and a later pass must finish the job.
func TestCleanCrashAtEveryStep(t *testing.T) {
	e := compactEnv(t)
	l := e.open(0)
	m := model{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		k := fmt.Sprintf("k%d", rng.IntN(12))
		v := fmt.Sprint(i)
		if rng.IntN(6) == 0 {
			v = ""
		}
		m[k] = v
		// Uncompressed and snappy only: the swap is under test here, and
		// every reopened log makes its own zstd and gzip decoders.
		e.appendKV(l, int8(2*rng.IntN(2)), kv{k, v})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	pristine := e.fs.Clone()
	steps := 0
	for k := 1; ; k++ {
		fsys := pristine.Clone()
		l, err := Open(fsys, "/data/t-0", e.cfg, Options{Logger: testkit.Logger(t, slog.LevelWarn), Now: e.clk.Now, RecoveryPoint: 1 << 62})
		if err != nil {
			t.Fatal(err)
		}
		power, kill, cerr := cleanCrashingAt(l, fsys, k, e.clk.Now())
		if power == nil {
			if cerr != nil {
				t.Fatal(cerr)
			}
			m.check(t, l, "after an uninterrupted pass")
			_ = l.Close()
			break
		}
		if cerr == nil {
			// The failed operation was one the pass may skip (a
			// best-effort removal); the pass went on.
			m.check(t, l, fmt.Sprintf("step %d survived", k))
		}
		_ = l.Close()
		steps++
		for name, crashed := range map[string]*vfs.MemFS{"power loss": power, "process kill": kill} {
			when := fmt.Sprintf("%s at step %d", name, k)
			l2, err := Open(crashed, "/data/t-0", e.cfg, Options{Logger: testkit.Logger(t, slog.LevelWarn), Now: e.clk.Now})
			if err != nil {
				t.Fatalf("%s: reopen: %v", when, err)
			}
			m.check(t, l2, when)
			names, _ := crashed.List("/data/t-0")
			for _, n := range names {
				if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) || strings.HasSuffix(n, deletedSuffix) {
					t.Fatalf("%s: leftover %s after recovery", when, n)
				}
			}
			if _, err := l2.Clean(CleanOptions{Now: e.clk.Now(), UpperBound: l2.EndOffset(), MapBytes: 1 << 20}); err != nil {
				t.Fatalf("%s: clean after recovery: %v", when, err)
			}
			m.check(t, l2, when+", cleaned again")
			_ = l2.Close()
		}
	}
	if steps < 20 {
		t.Fatalf("only %d crash points", steps)
	}
}

// TestCleanProperty interleaves random keyed writes (tombstones, every
// codec), clock steps, cleaning passes and crashes (power loss or process
// kill at a random operation of a pass), checking after each that the log
// read from its start yields every key's latest value, or nothing once a
// tombstone's horizon passed, with offsets strictly increasing.
func TestCleanProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(testkit.Seed(t), 7))
	e := compactEnv(t)
	e.cfg.SegmentBytes = int64(300 + rng.IntN(1000))
	l := e.open(0)
	defer func() { _ = l.Close() }()
	m := model{}
	reopen := func(fsys *vfs.MemFS) {
		_ = l.Close()
		e.fs = fsys
		var err error
		l, err = Open(e.fs, "/data/t-0", e.cfg, Options{Logger: testkit.Logger(t, slog.LevelWarn), Now: e.clk.Now})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
	}
	for i := range 500 {
		switch op := rng.IntN(10); {
		case op < 6:
			var recs []kv
			for range 1 + rng.IntN(4) {
				k := fmt.Sprintf("k%d", rng.IntN(30))
				v := fmt.Sprintf("v%d-%d", i, len(recs))
				if rng.IntN(5) == 0 {
					v = ""
				}
				m[k] = v
				recs = append(recs, kv{k, v})
			}
			e.appendKV(l, int8(rng.IntN(5)), recs...)
		case op == 6:
			e.clk.Advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
		case op < 9:
			e.clean(l)
		default:
			power, kill, err := cleanCrashingAt(l, e.fs, 1+rng.IntN(80), e.clk.Now())
			crashed := power
			if rng.IntN(2) == 0 {
				crashed = kill
			}
			if crashed == nil {
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			reopen(crashed)
		}
		m.check(t, l, fmt.Sprintf("step %d", i))
	}
	// Long after, two passes leave no tombstone below the active segment:
	// the first gives the tombstones left a horizon, the second, past it,
	// removes them (each pass needs new dirty data, as in Kafka).
	for i := range 2 {
		e.clk.Advance(time.Hour)
		e.appendKV(l, 0, kv{"last", fmt.Sprint(i)})
		m["last"] = fmt.Sprint(i)
		if err := l.MaybeRoll(e.clk.Now().Add(8 * 24 * time.Hour)); err != nil {
			t.Fatal(err)
		}
		e.clean(l)
	}
	active := l.Segments()[len(l.Segments())-1].BaseOffset
	for _, r := range readRecords(t, l) {
		if r.tombstone && r.offset < active {
			t.Fatalf("tombstone of %s at %d survives its horizon", r.key, r.offset)
		}
	}
	m.check(t, l, "end")
}

func TestManagerCleansDirtiestAndCheckpoints(t *testing.T) {
	fsys := vfs.NewMem()
	clk := newClock()
	cfg := DefaultConfig()
	cfg.CleanupPolicy, cfg.SegmentBytes = CleanupCompact, 400
	opts := ManagerOptions{Logger: testkit.Logger(t, slog.LevelWarn), Now: clk.Now, ConfigFor: func(string) Config { return cfg }}
	m, err := OpenManager(fsys, "/data", opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, fs: fsys, clk: clk, cfg: cfg}
	little, err := m.Create("little", 0, [16]byte{1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dirty, err := m.Create("dirty", 0, [16]byte{2}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		e.appendKV(dirty, 0, kv{"k", fmt.Sprint(i)})
		if i%4 == 0 {
			e.appendKV(little, 0, kv{fmt.Sprint("k", i), "v"})
		}
	}
	end := func(_ TopicPartition, l *Log) int64 { return l.EndOffset() }
	tp, res, ok, err := m.CleanDirtiest(CleanOptions{Now: clk.Now(), MapBytes: 1 << 20}, end)
	if err != nil || !ok || tp.Topic != "dirty" || !res.Cleaned {
		t.Fatalf("first pick %v %+v %v %v", tp, res, ok, err)
	}
	b, err := readFile(fsys, path.Join("/data", CleanerOffsetCheckpoint), 1<<10)
	if err != nil || !strings.Contains(string(b), fmt.Sprintf("dirty 0 %d\n", res.End)) {
		t.Fatalf("checkpoint %q %v", b, err)
	}
	// "little" has no duplicate keys but a dirty section: ratio 1.
	tp, _, ok, err = m.CleanDirtiest(CleanOptions{Now: clk.Now(), MapBytes: 1 << 20}, end)
	if err != nil || !ok || tp.Topic != "little" {
		t.Fatalf("second pick %v %v %v", tp, ok, err)
	}
	// Clean now: nothing left above min.cleanable.dirty.ratio.
	if tp, _, ok, _ := m.CleanDirtiest(CleanOptions{Now: clk.Now(), MapBytes: 1 << 20}, end); ok {
		t.Fatalf("third pick %v", tp)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = OpenManager(fsys, "/data", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.Get("dirty", 0).CleanerCheckpoint(); got != res.End {
		t.Fatalf("checkpoint after reopen %d, want %d", got, res.End)
	}
	if got := latest(readRecords(t, m.Get("dirty", 0))); got["k"].value != "39" {
		t.Fatalf("after reopen %+v", got["k"])
	}
}

// TestCleanKeepsProducersLastBatch: a producer's last batch, every record
// of it superseded, stays as an empty batch (Kafka's RETAIN_EMPTY), so its
// sequence survives a reload; an older batch of it goes.
func TestCleanKeepsProducersLastBatch(t *testing.T) {
	e := compactEnv(t)
	l := e.open(0)
	for seq := range int32(2) {
		// Snappy: the emptied batch must not keep the codec (an empty
		// snappy body is no snappy data to a client).
		mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli(), ProducerID: 5, BaseSequence: seq, Compression: int8(record.Snappy)},
			logtest.Record{Key: []byte("a"), Value: []byte("from 5")}), 0)
	}
	for i := range 20 {
		e.appendKV(l, 0, kv{"a", fmt.Sprint(i)})
	}
	e.clean(l)
	var mine []record.Batch
	for _, b := range readAllBatches(t, l) {
		if record.Batch(b).ProducerID() == 5 {
			mine = append(mine, record.Batch(b))
		}
	}
	if len(mine) != 1 || mine[0].RecordCount() != 0 || mine[0].LastOffset() != 1 || mine[0].BaseSequence() != 1 {
		t.Fatalf("producer 5's batches after cleaning: %d, first %x", len(mine), mine)
	}
	// As Kafka's DefaultRecordBatch.writeEmptyHeader: a bare header,
	// uncompressed.
	if c := mine[0].Attributes().Compression(); c != record.None || mine[0].Size() != record.HeaderSize {
		t.Fatalf("emptied batch: codec %v, %d bytes; want none, %d", c, mine[0].Size(), record.HeaderSize)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Without snapshots the state is replayed from the cleaned segments.
	names, err := e.fs.List("/data/t-0")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".snapshot") {
			if err := e.fs.Remove(path.Join("/data/t-0", n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	l = e.open(0)
	defer l.Close()
	ps := l.Producers()
	if len(ps) != 1 || ps[0].ProducerID != 5 || ps[0].LastSequence != 1 {
		t.Fatalf("producers after reload: %+v", ps)
	}
}

// TestCleanDroppedByTruncation: a truncation while a pass writes its
// segment makes the pass drop it: the swap would bring back what the
// truncation removed.
func TestCleanDroppedByTruncation(t *testing.T) {
	e := compactEnv(t)
	l := e.open(0)
	defer l.Close()
	for i := range 60 {
		e.appendKV(l, 0, kv{fmt.Sprint("k", i), fmt.Sprint(i)}) // nothing superseded
	}
	base := l.Segments()[2].BaseOffset
	cut := base + 1
	truncated := false
	// After the pass read the segment and wrote its cleaned copy, before
	// the swap.
	e.fs.InjectError(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && path.Base(name) == segmentName(base, ".log"+cleanedSuffix) && !truncated {
			truncated = true
			if err := l.Truncate(cut); err != nil {
				t.Errorf("truncate: %v", err)
			}
			// New data rolls the cut segment: it is no longer active.
			for i := range 30 {
				e.appendKV(l, 0, kv{"new", fmt.Sprint(i)})
			}
		}
		return nil
	})
	res := e.clean(l)
	e.fs.InjectError(nil)
	if !truncated || res.Cleaned {
		t.Fatalf("truncated %v, pass %+v", truncated, res)
	}
	for _, r := range readRecords(t, l) {
		if r.offset >= cut && r.key != "new" {
			t.Fatalf("offset %d (%s=%s) back after truncating to %d", r.offset, r.key, r.value, cut)
		}
	}
	if st := l.CleanerState(e.clk.Now(), l.EndOffset()); st.FirstDirtyOffset > cut {
		t.Fatalf("cleaner checkpoint %d above the truncation to %d", st.FirstDirtyOffset, cut)
	}
	names, _ := e.fs.List("/data/t-0")
	for _, n := range names {
		if strings.HasSuffix(n, cleanedSuffix) {
			t.Fatalf("leftover %s", n)
		}
	}
}

// TestCleanDryRunPlansThePass: a dry run writes nothing and reports what
// the real pass then does: the same records, bytes, tombstones and
// segments, per key, and the tombstones kept with their horizon.
func TestCleanDryRunPlansThePass(t *testing.T) {
	e := compactEnv(t)
	l := e.open(0)
	defer l.Close()
	for i := range 10 {
		e.appendKV(l, 0, kv{"a", fmt.Sprint("a", i)})
		if i < 3 {
			e.appendKV(l, 0, kv{"b", fmt.Sprint("b", i)})
		}
	}
	e.appendKV(l, 0, kv{"c", "1"}, kv{"c", ""}) // c: a value, then its tombstone
	for i := range 20 {
		e.appendKV(l, 0, kv{fmt.Sprint("z", i), "v"}) // fills segments: c is below the active one
	}
	before := readAllBatches(t, l)
	opts := CleanOptions{Now: e.clk.Now(), UpperBound: l.EndOffset(), MapBytes: 1 << 20, DryRun: true}
	plan, err := l.Clean(opts)
	if err != nil {
		t.Fatal(err)
	}
	if after := readAllBatches(t, l); !slices.EqualFunc(before, after, bytes.Equal) {
		t.Fatal("a dry run changed the log")
	}
	if st := l.CleanerState(e.clk.Now(), l.EndOffset()); st.Runs != 0 || st.FirstDirtyOffset != 0 {
		t.Fatalf("a dry run changed the cleaner state: %+v", st)
	}
	if plan.Cleaned || plan.Plan == nil {
		t.Fatalf("dry run %+v", plan)
	}
	want := []KeyRemoval{{Key: []byte("a"), Records: 9}, {Key: []byte("b"), Records: 2}, {Key: []byte("c"), Records: 1}}
	if got := plan.Plan.Keys; !slices.EqualFunc(got, want, func(x, y KeyRemoval) bool { return bytes.Equal(x.Key, y.Key) && x.Records == y.Records }) {
		t.Fatalf("per key %+v, want %+v", got, want)
	}
	if p := plan.Plan; p.KeysAffected != 3 || p.TombstonesPending != 1 || len(p.Tombstones) != 1 ||
		string(p.Tombstones[0].Key) != "c" || !p.Tombstones[0].Expires.Equal(e.clk.Now().Add(time.Second).Truncate(time.Millisecond)) {
		t.Fatalf("plan %+v", p)
	}
	opts.DryRun = false
	res, err := l.Clean(opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cleaned || res.RecordsRemoved != plan.RecordsRemoved || res.BytesRemoved != plan.BytesRemoved ||
		res.TombstonesRemoved != plan.TombstonesRemoved || res.SegmentsAfter != plan.SegmentsAfter || res.End != plan.End {
		t.Fatalf("the pass did %+v, the dry run said %+v", res, plan)
	}
	if res.RecordsRemoved != 12 {
		t.Fatalf("removed %d records, want 12", res.RecordsRemoved)
	}
	// After the horizon the dry run says the tombstone goes.
	e.clk.Advance(2 * time.Second)
	for i := range 20 {
		e.appendKV(l, 0, kv{fmt.Sprint("y", i), "v"})
	}
	opts.Now, opts.UpperBound, opts.DryRun = e.clk.Now(), l.EndOffset(), true
	plan, err = l.Clean(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.DryRun = false
	if res, err = l.Clean(opts); err != nil || res.TombstonesRemoved != plan.TombstonesRemoved || res.RecordsRemoved != plan.RecordsRemoved || res.TombstonesRemoved == 0 {
		t.Fatalf("second pass %+v %v, dry run %+v", res, err, plan)
	}
}

// TestCleanNowCleansEverything: with an offset map too small for the dirty
// section, one pass stops early; CleanNow goes on to the first
// uncleanable offset and writes the checkpoint.
func TestCleanNowCleansEverything(t *testing.T) {
	fsys := vfs.NewMem()
	clk := newClock()
	cfg := DefaultConfig()
	cfg.CleanupPolicy, cfg.SegmentBytes = CleanupCompact, 400
	m, err := OpenManager(fsys, "/data", ManagerOptions{Logger: testkit.Logger(t, slog.LevelWarn), Now: clk.Now, ConfigFor: func(string) Config { return cfg }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e := &env{t: t, fs: fsys, clk: clk, cfg: cfg}
	l, err := m.Create("t", 0, [16]byte{1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		for k := range 60 {
			e.appendKV(l, 0, kv{fmt.Sprint("k", k), fmt.Sprint(round)})
		}
	}
	opts := CleanOptions{Now: clk.Now(), UpperBound: l.EndOffset(), MapBytes: 20 * offsetMapSlotBytes}
	one, err := l.Clean(opts)
	if err != nil || !one.Cleaned || one.End >= one.Uncleanable {
		t.Fatalf("one pass %+v %v: want it to stop early", one, err)
	}
	res, err := m.CleanNow(l, opts)
	if err != nil || !res.Cleaned || res.End != res.Uncleanable || res.FirstDirty != one.End {
		t.Fatalf("clean now %+v %v (after a pass to %d)", res, err, one.End)
	}
	b, err := readFile(fsys, path.Join("/data", CleanerOffsetCheckpoint), 1<<10)
	if err != nil || !strings.Contains(string(b), fmt.Sprintf("t 0 %d\n", res.End)) {
		t.Fatalf("checkpoint %q %v", b, err)
	}
	// Round 1 wrote offsets 60 to 119: a round-0 value stays only where
	// its key's round-1 value is at or past the cleaned end.
	for _, r := range readRecords(t, l) {
		if r.value == "0" && r.offset+60 < res.End {
			t.Fatalf("offset %d: key %s kept value 0, its round-1 value at %d below the cleaned end %d", r.offset, r.key, r.offset+60, res.End)
		}
	}
}

// TestCleanStops: a pass whose Stop is closed ends with ErrCleanStopped
// and leaves the log as it was.
func TestCleanStops(t *testing.T) {
	e := compactEnv(t)
	l := e.open(0)
	defer l.Close()
	for i := range 40 {
		e.appendKV(l, 0, kv{fmt.Sprint("k", i%4), fmt.Sprint(i)})
	}
	before := readAllBatches(t, l)
	stop := make(chan struct{})
	close(stop)
	for _, dry := range []bool{true, false} {
		_, err := l.Clean(CleanOptions{Now: e.clk.Now(), UpperBound: l.EndOffset(), MapBytes: 1 << 20, Stop: stop, DryRun: dry})
		if !errors.Is(err, ErrCleanStopped) {
			t.Fatalf("dry run %v: %v, want ErrCleanStopped", dry, err)
		}
	}
	if after := readAllBatches(t, l); !slices.EqualFunc(before, after, bytes.Equal) {
		t.Fatal("a stopped pass changed the log")
	}
	if res := e.clean(l); !res.Cleaned || res.RecordsRemoved == 0 {
		t.Fatalf("a pass after the stopped one: %+v", res)
	}
}
