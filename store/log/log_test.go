package log

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"testing"
	"time"

	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
)

func TestAppendRead(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	var want [][]byte
	for i := range 10 {
		b := e.batch(i+1, 50)
		r := mustAppend(t, l, b, 3)
		if r.Records != i+1 || r.LastOffset-r.FirstOffset != int64(i) || r.LogAppendTime != -1 {
			t.Fatalf("result %+v", r)
		}
		want = append(want, b) // patched in place
	}
	if l.EndOffset() != 55 || l.StartOffset() != 0 {
		t.Fatalf("offsets %d %d", l.StartOffset(), l.EndOffset())
	}
	got := readAllBatches(t, l)
	if len(got) != len(want) {
		t.Fatalf("%d batches", len(got))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("batch %d differs", i)
		}
		if logtest.LeaderEpoch(got[i]) != 3 {
			t.Fatalf("epoch %d", logtest.LeaderEpoch(got[i]))
		}
		if err := record.Batch(got[i]).CheckCRC(); err != nil {
			t.Fatal(err)
		}
	}
	// Mid-batch offset returns the containing batch.
	b, err := l.Read(nil, 2, 1<<20, l.EndOffset(), false)
	if err != nil || logtest.BaseOffset(b) != 1 {
		t.Fatalf("read mid batch: base %d err %v", logtest.BaseOffset(b), err)
	}
	// Everything fits into one read.
	b, err = l.Read(nil, 0, 1<<20, l.EndOffset(), false)
	if err != nil || len(logtest.Split(b)) != 10 {
		t.Fatalf("read all: %d batches, %v", len(logtest.Split(b)), err)
	}
	// Upper bound cuts whole batches.
	b, _ = l.Read(nil, 0, 1<<20, 6, false)
	if n := len(logtest.Split(b)); n != 3 {
		t.Fatalf("bounded read: %d batches", n)
	}
	// At LEO: nothing; past it: out of range; at bound: nothing.
	if b, err := l.Read(nil, 55, 100, 55, false); err != nil || len(b) != 0 {
		t.Fatalf("read at end: %d %v", len(b), err)
	}
	if _, err := l.Read(nil, 56, 100, 56, false); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past end: %v", err)
	}
	if b, err := l.Read(nil, 10, 100, 10, false); err != nil || len(b) != 0 {
		t.Fatalf("read at bound: %d %v", len(b), err)
	}
}

func TestMinOneBatch(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	big := e.batch(5, 1000)
	mustAppend(t, l, big, 0)
	mustAppend(t, l, e.batch(1, 10), 0)
	b, err := l.Read(nil, 0, 100, l.EndOffset(), false)
	if err != nil || len(b) != 0 {
		t.Fatalf("without minOneBatch: %d bytes, %v", len(b), err)
	}
	b, err = l.Read(nil, 0, 100, l.EndOffset(), true)
	if err != nil || len(b) != len(big) {
		t.Fatalf("with minOneBatch: %d bytes, %v", len(b), err)
	}
	// Only whole batches within maxBytes after the first.
	b, _ = l.Read(nil, 0, len(big)+10, l.EndOffset(), true)
	if len(b) != len(big) {
		t.Fatalf("partial second batch returned: %d", len(b))
	}
	// dst is appended to.
	b, _ = l.Read([]byte("xy"), 5, 1000, l.EndOffset(), false)
	if string(b[:2]) != "xy" || logtest.BaseOffset(b[2:]) != 5 {
		t.Fatalf("dst not kept")
	}
}

func TestValidation(t *testing.T) {
	e := newEnv(t)
	e.cfg.MaxMessageBytes = 2000
	l := e.open(0)
	defer l.Close()
	good := e.batch(2, 10)
	corrupt := e.batch(2, 10)
	corrupt[len(corrupt)-1] ^= 0xff
	badMagic := e.batch(1, 10)
	record.Batch(badMagic).SetMagic(1)
	logtest.Reseal(badMagic)
	badDelta := e.batch(3, 10)
	record.Batch(badDelta).SetLastOffsetDelta(5)
	logtest.Reseal(badDelta)
	tooOld := logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli() - 10}, logtest.Values(1, 5)...)
	future := logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli() + 2*3600*1000}, logtest.Values(1, 5)...)
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrInvalidRecord},
		{"crc", corrupt, ErrCorruptMessage},
		{"truncated", good[:len(good)-1], ErrCorruptMessage},
		{"trailing bytes", append(append([]byte(nil), good...), 1, 2, 3), ErrCorruptMessage},
		{"magic", badMagic, ErrInvalidRecord},
		{"count", logtest.Batch(), ErrInvalidRecord},
		{"offset delta", badDelta, ErrInvalidRecord},
		{"too large", e.batch(3, 1000), ErrMessageTooLarge},
		{"future timestamp", future, ErrInvalidTimestamp},
		{"second batch bad", logtest.Concat(good, corrupt), ErrCorruptMessage},
	}
	for _, c := range cases {
		if _, err := l.Append(c.b, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		if l.EndOffset() != 0 {
			t.Fatalf("%s: appended something", c.name)
		}
	}
	// Every record out of range is listed, with Kafka's message.
	now := e.clk.UnixMilli()
	mixed := logtest.Values(3, 5)
	mixed[0].TimestampDelta, mixed[2].TimestampDelta = 2*3600*1000, 3*3600*1000
	_, err := l.Append(logtest.BatchWith(logtest.Options{BaseTimestamp: now}, mixed...), 0)
	var refused *RecordErrors
	if !errors.As(err, &refused) || !errors.Is(err, ErrInvalidTimestamp) {
		t.Fatalf("two future records: %v, want *RecordErrors of ErrInvalidTimestamp", err)
	}
	want := []RecordError{
		{0, fmt.Sprintf("Timestamp %d of message with offset 0 is out of range. The timestamp should be within [%d, %d]", now+2*3600*1000, now-math.MaxInt64, now+3600*1000)},
		{2, fmt.Sprintf("Timestamp %d of message with offset 2 is out of range. The timestamp should be within [%d, %d]", now+3*3600*1000, now-math.MaxInt64, now+3600*1000)},
	}
	if !slices.Equal(refused.Records, want) {
		t.Errorf("record errors %+v\nwant %+v", refused.Records, want)
	}
	// A compacted log refuses records without a key, each listed with
	// Kafka's message; a timestamp out of range makes the batch's class.
	e.cfg.CleanupPolicy = CleanupCompact
	l.SetConfig(e.cfg)
	keyless := logtest.Values(3, 5)
	keyless[1].Key = []byte("k")
	keyless[2].TimestampDelta = 2 * 3600 * 1000
	_, err = l.Append(logtest.BatchWith(logtest.Options{BaseTimestamp: now}, keyless...), 0)
	nameMsg := "Compacted topic cannot accept message without key in topic partition " + path.Base(l.Dir())
	if !errors.As(err, &refused) || !errors.Is(err, ErrInvalidRecord) || len(refused.Records) != 2 || refused.Records[0] != (RecordError{0, nameMsg}) || refused.Records[1] != (RecordError{2, nameMsg}) {
		t.Errorf("keyless records in a compacted log: %v %+v", err, refused)
	}
	keyless[0].Key, keyless[2].Key = []byte("a"), []byte("c")
	if _, err = l.Append(logtest.BatchWith(logtest.Options{BaseTimestamp: now}, keyless...), 0); !errors.As(err, &refused) || !errors.Is(err, ErrInvalidTimestamp) || len(refused.Records) != 1 {
		t.Errorf("keyed records, one too far ahead: %v %+v", err, refused)
	}
	e.cfg.CleanupPolicy = CleanupDelete
	l.SetConfig(e.cfg)
	if _, err := l.Append(tooOld, 0); err != nil {
		t.Fatalf("default before.max.ms is unlimited: %v", err)
	}
	e.cfg.TimestampBeforeMaxMs = 5
	l.SetConfig(e.cfg)
	old2 := logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli() - 10}, logtest.Values(1, 5)...)
	if _, err := l.Append(old2, 0); !errors.Is(err, ErrInvalidTimestamp) {
		t.Fatalf("old timestamp: %v", err)
	}
	// Compressed batches: header checks only.
	gz := logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli(), Compression: 1}, logtest.Values(3, 10)...)
	r := mustAppend(t, l, gz, 0)
	if r.FirstOffset != 1 || r.LastOffset != 3 {
		t.Fatalf("gzip append %+v", r)
	}
	// Control batches are accepted.
	ctl := logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli(), Control: true, Transactional: true, ProducerID: 7}, logtest.Record{Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0, 0, 0, 0}})
	mustAppend(t, l, ctl, 0)
}

func TestLogAppendTime(t *testing.T) {
	e := newEnv(t)
	e.cfg.LogAppendTime = true
	l := e.open(0)
	defer l.Close()
	b := logtest.BatchWith(logtest.Options{BaseTimestamp: 5}, logtest.Values(2, 10)...)
	r := mustAppend(t, l, b, 0)
	if r.LogAppendTime != e.clk.UnixMilli() || r.MaxTimestamp != e.clk.UnixMilli() {
		t.Fatalf("result %+v", r)
	}
	got := readAllBatches(t, l)[0]
	if logtest.MaxTimestamp(got) != e.clk.UnixMilli() || record.Batch(got).Attributes().TimestampType() != record.LogAppendTime {
		t.Fatalf("log append time not stamped")
	}
	if err := record.Batch(got).CheckCRC(); err != nil {
		t.Fatal(err)
	}
}

func TestMaxTimestampFixed(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	base := e.clk.UnixMilli()
	recs := logtest.Values(3, 5)
	recs[1].TimestampDelta = 50
	b := logtest.BatchWith(logtest.Options{BaseTimestamp: base}, recs...)
	// A producer that lies about the max timestamp.
	record.Batch(b).SetMaxTimestamp(1)
	logtest.Reseal(b)
	mustAppend(t, l, b, 0)
	ts, off := l.MaxTimestamp()
	if ts != base+50 || off != 1 {
		t.Fatalf("max timestamp %d at %d", ts, off)
	}
}

func TestRollOnSegmentBytesAndIndexes(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 4000
	e.cfg.IndexIntervalBytes = 500
	l := e.open(0)
	var batches [][]byte
	for i := range 30 {
		e.clk.Advance(time.Millisecond)
		b := e.batch(2, 100+i)
		mustAppend(t, l, b, 0)
		batches = append(batches, b)
	}
	segs := l.Segments()
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	for i, s := range segs {
		if s.Size > 4000 {
			t.Fatalf("segment %d has %d bytes", i, s.Size)
		}
		if i > 0 && s.BaseOffset != segs[i-1].NextOffset {
			t.Fatalf("segment %d base %d, previous next %d", i, s.BaseOffset, segs[i-1].NextOffset)
		}
		if !s.Active && (s.IndexEntries == 0 || s.TimeIndexEntries == 0) {
			t.Fatalf("segment %d: %d index, %d time index entries", i, s.IndexEntries, s.TimeIndexEntries)
		}
		if s.Active != (i == len(segs)-1) {
			t.Fatalf("active flag on %d", i)
		}
	}
	// Index files on disk of a rolled segment match what Kafka would hold.
	s0 := l.segments()[0]
	ib, _ := readFile(e.fs, s0.path(".index"), 1<<20)
	tb, _ := readFile(e.fs, s0.path(".timeindex"), 1<<20)
	offs, err := parseOffsetIndex(ib, s0.size.Load())
	if err != nil || len(offs) != segs[0].IndexEntries {
		t.Fatalf("index file: %d entries, %v", len(offs), err)
	}
	times, err := parseTimeIndex(tb)
	if err != nil || len(times) != segs[0].TimeIndexEntries {
		t.Fatalf("time index file: %d entries, %v", len(times), err)
	}
	// Every offset index entry points at a batch whose last offset it names.
	for _, ent := range offs {
		var hdr [record.ScanHeaderSize]byte
		h, err := s0.batchAt(int64(ent.pos), &hdr)
		if err != nil || h.LastOffset() != s0.base+int64(ent.rel) {
			t.Fatalf("entry %+v: batch %+v %v", ent, h, err)
		}
	}
	// The last time index entry of a rolled segment holds its max timestamp.
	if last := times[len(times)-1]; last.ts != segs[0].MaxTimestamp {
		t.Fatalf("last time entry %d, max %d", last.ts, segs[0].MaxTimestamp)
	}
	// Lookups across segments.
	for off := int64(0); off < l.EndOffset(); off++ {
		b, err := l.Read(nil, off, 1, l.EndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		want := batches[off/2]
		if !bytes.Equal(b, want) {
			t.Fatalf("offset %d: wrong batch (base %d)", off, logtest.BaseOffset(b))
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopen cleanly (no rescan) and read again.
	l = e.open(60)
	defer l.Close()
	if l.EndOffset() != 60 || len(l.Segments()) != len(segs) {
		t.Fatalf("reopen: end %d, %d segments", l.EndOffset(), len(l.Segments()))
	}
	got := readAllBatches(t, l)
	for i := range got {
		if !bytes.Equal(got[i], batches[i]) {
			t.Fatalf("after reopen batch %d differs", i)
		}
	}
}

func TestRollOnSegmentMs(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentMs = 1000
	l := e.open(0)
	defer l.Close()
	mustAppend(t, l, e.batch(1, 10), 0)
	if err := l.MaybeRoll(e.clk.Now()); err != nil || len(l.Segments()) != 1 {
		t.Fatalf("rolled too early: %v", err)
	}
	e.clk.Advance(1001 * time.Millisecond)
	if err := l.MaybeRoll(e.clk.Now()); err != nil || len(l.Segments()) != 2 {
		t.Fatalf("no roll after segment.ms: %d segments, %v", len(l.Segments()), err)
	}
	// An empty active segment never rolls.
	e.clk.Advance(5000 * time.Millisecond)
	if err := l.MaybeRoll(e.clk.Now()); err != nil || len(l.Segments()) != 2 {
		t.Fatalf("empty segment rolled")
	}
	// Append path rolls too.
	mustAppend(t, l, e.batch(1, 10), 0)
	e.clk.Advance(1001 * time.Millisecond)
	mustAppend(t, l, e.batch(1, 10), 0)
	if n := len(l.Segments()); n != 3 {
		t.Fatalf("append did not roll on segment.ms: %d", n)
	}
	// Rolling flushed: recovery point reached the roll point.
	if rp := l.RecoveryPoint(); rp != 2 {
		t.Fatalf("recovery point %d", rp)
	}
}

func TestRetention(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 1000
	e.cfg.RetentionMs = 10_000
	l := e.open(0)
	defer l.Close()
	for range 10 {
		mustAppend(t, l, e.batch(1, 800), 0)
		e.clk.Advance(time.Second)
	}
	if n := len(l.Segments()); n != 10 {
		t.Fatalf("%d segments", n)
	}
	// Segments with max timestamp older than now-10s: none yet.
	if n, err := l.ApplyRetention(e.clk.Now()); err != nil || n != 0 {
		t.Fatalf("retention deleted %d: %v", n, err)
	}
	e.clk.Advance(3500 * time.Millisecond) // first 4 segments (t0..t3) older than 10s
	n, err := l.ApplyRetention(e.clk.Now())
	if err != nil || n != 4 {
		t.Fatalf("retention by time deleted %d: %v", n, err)
	}
	if l.StartOffset() != 4 {
		t.Fatalf("start offset %d", l.StartOffset())
	}
	if _, err := l.Read(nil, 3, 100, l.EndOffset(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	names, _ := e.fs.List("/data/t-0")
	for _, nm := range names {
		if nm == segmentName(0, ".log") {
			t.Fatalf("deleted segment file still there")
		}
	}
	// By bytes: keep at most 2 segments' worth.
	e.cfg.RetentionMs = -1
	e.cfg.RetentionBytes = 2 * int64(l.Segments()[0].Size)
	l.SetConfig(e.cfg)
	n, err = l.ApplyRetention(e.clk.Now())
	if err != nil || n != 4 {
		t.Fatalf("retention by bytes deleted %d: %v", n, err)
	}
	if l.StartOffset() != 8 || len(l.Segments()) != 2 {
		t.Fatalf("start %d with %d segments", l.StartOffset(), len(l.Segments()))
	}
	// Never the active segment.
	e.cfg.RetentionBytes = 0
	l.SetConfig(e.cfg)
	if _, err := l.ApplyRetention(e.clk.Now()); err != nil || len(l.Segments()) != 1 {
		t.Fatalf("active segment deleted or error %v", err)
	}
}

func TestSetStartOffset(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 1000
	l := e.open(0)
	defer l.Close()
	for range 5 {
		mustAppend(t, l, e.batch(2, 200), 0)
	}
	// Segments hold offsets [0,4) [4,8) [8,10).
	if err := l.SetStartOffset(5); err != nil {
		t.Fatal(err)
	}
	if l.StartOffset() != 5 || len(l.Segments()) != 2 {
		t.Fatalf("start %d, %d segments", l.StartOffset(), len(l.Segments()))
	}
	if _, err := l.Read(nil, 4, 1000, 10, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	if b, err := l.Read(nil, 5, 1000, 10, true); err != nil || logtest.BaseOffset(b) != 4 {
		t.Fatalf("read at start: %v", err)
	}
	if err := l.SetStartOffset(11); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("start past end: %v", err)
	}
	if err := l.SetStartOffset(3); err != nil || l.StartOffset() != 5 {
		t.Fatalf("start moved backwards")
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 600
	e.cfg.IndexIntervalBytes = 100
	l := e.open(0)
	defer l.Close()
	t0 := e.clk.UnixMilli()
	// Batch i has records at t0+10i, t0+10i+5.
	for i := range 10 {
		recs := logtest.Values(2, 100)
		recs[1].TimestampDelta = 5
		mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: t0 + int64(10*i)}, recs...), 0)
	}
	cases := []struct {
		ts      int64
		off, at int64
		ok      bool
	}{
		{t0 - 100, 0, t0, true},
		{t0, 0, t0, true},
		{t0 + 1, 1, t0 + 5, true},
		{t0 + 5, 1, t0 + 5, true},
		{t0 + 6, 2, t0 + 10, true},
		{t0 + 47, 10, t0 + 50, true},
		{t0 + 95, 19, t0 + 95, true},
		{t0 + 96, 0, 0, false},
	}
	for _, c := range cases {
		off, at, ok, err := l.OffsetForTimestamp(c.ts)
		if err != nil || ok != c.ok || (ok && (off != c.off || at != c.at)) {
			t.Errorf("ts %d: got %d@%d %v %v, want %d@%d %v", c.ts-t0, off, at-t0, ok, err, c.off, c.at-t0, c.ok)
		}
	}
	ts, off := l.MaxTimestamp()
	if ts != t0+95 || off != 19 {
		t.Fatalf("max timestamp %d at %d", ts-t0, off)
	}
	// Log start inside a batch skips earlier records.
	if err := l.SetStartOffset(3); err != nil {
		t.Fatal(err)
	}
	if off, _, ok, _ := l.OffsetForTimestamp(t0); !ok || off != 3 {
		t.Fatalf("after start offset 3: %d %v", off, ok)
	}
}

func TestMaxTimestampEmpty(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	if ts, off := l.MaxTimestamp(); ts != -1 || off != -1 {
		t.Fatalf("empty: %d %d", ts, off)
	}
	if _, _, ok, err := l.OffsetForTimestamp(0); ok || err != nil {
		t.Fatalf("empty: %v %v", ok, err)
	}
}

// TestEndOffsetFor follows Kafka's LeaderEpochFileCache.endOffsetFor over a
// cache whose first epoch is not 0, as after retention or a leader change.
func TestEndOffsetFor(t *testing.T) {
	es := []EpochEntry{{2, 5}, {4, 9}}
	for _, c := range []struct {
		in, ep int32
		off    int64
	}{
		{1, 1, 5},   // older than the cache: the epoch asked for, the first start
		{-2, -2, 5}, // so is a negative epoch other than -1
		{2, 2, 9}, {3, 2, 9},
		{4, 4, 20}, // the latest: the log end
		{5, -1, -1}, {-1, -1, -1},
	} {
		if ep, off := EndOffsetFor(es, c.in, 20); ep != c.ep || off != c.off {
			t.Errorf("epoch %d: got %d,%d want %d,%d", c.in, ep, off, c.ep, c.off)
		}
	}
	if ep, off := EndOffsetFor(nil, 0, 20); ep != -1 || off != -1 {
		t.Errorf("empty cache: got %d,%d", ep, off)
	}
}

func TestLeaderEpochs(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	mustAppend(t, l, e.batch(3, 10), 0)
	mustAppend(t, l, e.batch(3, 10), 0)
	mustAppend(t, l, e.batch(2, 10), 2)
	mustAppend(t, l, e.batch(2, 10), 1) // stale epoch: no entry
	mustAppend(t, l, e.batch(2, 10), 5)
	want := []EpochEntry{{0, 0}, {2, 6}, {5, 10}}
	if got := l.LeaderEpochs(); !equalEpochs(got, want) {
		t.Fatalf("epochs %v", got)
	}
	b, _ := readFile(e.fs, "/data/t-0/"+LeaderEpochCheckpointFile, 1000)
	if string(b) != "0\n3\n0 0\n2 6\n5 10\n" {
		t.Fatalf("checkpoint file %q", b)
	}
	for _, c := range []struct {
		in, ep int32
		off    int64
	}{{0, 0, 6}, {1, 0, 6}, {2, 2, 10}, {3, 2, 10}, {5, 5, 12}, {6, -1, -1}, {-1, -1, -1}, {-3, -3, 0}} {
		if ep, off := l.EndOffsetForEpoch(c.in); ep != c.ep || off != c.off {
			t.Errorf("epoch %d: got %d,%d want %d,%d", c.in, ep, off, c.ep, c.off)
		}
	}
	// Truncation drops later epochs.
	if err := l.Truncate(8); err != nil {
		t.Fatal(err)
	}
	if got := l.LeaderEpochs(); !equalEpochs(got, []EpochEntry{{0, 0}, {2, 6}}) {
		t.Fatalf("after truncate %v", got)
	}
	l.Close()
	l = e.open(0)
	defer l.Close()
	if got := l.LeaderEpochs(); !equalEpochs(got, []EpochEntry{{0, 0}, {2, 6}}) {
		t.Fatalf("after reopen %v", got)
	}
}

func equalEpochs(a, b []EpochEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTruncate(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 1000
	e.cfg.IndexIntervalBytes = 100
	l := e.open(0)
	defer l.Close()
	for range 10 {
		mustAppend(t, l, e.batch(2, 200), 0)
	}
	segsBefore := len(l.Segments())
	if err := l.Truncate(9); err != nil { // inside batch [8,10): removed whole
		t.Fatal(err)
	}
	if l.EndOffset() != 8 {
		t.Fatalf("end %d", l.EndOffset())
	}
	if len(l.Segments()) >= segsBefore {
		t.Fatalf("segments not dropped: %d", len(l.Segments()))
	}
	got := readAllBatches(t, l)
	if len(got) != 4 {
		t.Fatalf("%d batches", len(got))
	}
	// Appends continue at the new end, then truncate everything.
	r := mustAppend(t, l, e.batch(1, 10), 0)
	if r.FirstOffset != 8 {
		t.Fatalf("append after truncate at %d", r.FirstOffset)
	}
	if err := l.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if l.EndOffset() != 0 || l.StartOffset() != 0 || len(l.Segments()) != 1 {
		t.Fatalf("truncate to 0: %d %d %d", l.StartOffset(), l.EndOffset(), len(l.Segments()))
	}
	if r := mustAppend(t, l, e.batch(1, 10), 0); r.FirstOffset != 0 {
		t.Fatalf("append at %d", r.FirstOffset)
	}
}

func TestOffsetForTimestampCompressed(t *testing.T) {
	for _, c := range []struct {
		name  string
		codec int8
		raw   bool
	}{{"gzip", 1, false}, {"snappy-xerial", 2, false}, {"snappy-raw", 2, true}, {"lz4", 3, false}, {"zstd", 4, false}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			l := e.open(0)
			defer l.Close()
			t0 := e.clk.UnixMilli()
			recs := logtest.Values(4, 300)
			for i := range recs {
				recs[i].TimestampDelta = int64(10 * i)
			}
			mustAppend(t, l, e.batch(1, 10), 0)
			mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: t0, Compression: c.codec, RawSnappy: c.raw}, recs...), 0)
			off, ts, ok, err := l.OffsetForTimestamp(t0 + 15)
			if err != nil || !ok || off != 3 || ts != t0+20 {
				t.Fatalf("got %d@%d %v %v, want 3@+20", off, ts-t0, ok, err)
			}
			if _, err := l.Read(nil, 1, 1<<20, l.EndOffset(), false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOffsetForTimestampLogAppendTime(t *testing.T) {
	e := newEnv(t)
	e.cfg.LogAppendTime = true
	l := e.open(0)
	defer l.Close()
	mustAppend(t, l, e.batch(3, 10), 0)
	e.clk.Advance(time.Second)
	mustAppend(t, l, e.batch(3, 10), 0)
	off, ts, ok, err := l.OffsetForTimestamp(e.clk.UnixMilli() - 10)
	if err != nil || !ok || off != 3 || ts != e.clk.UnixMilli() {
		t.Fatalf("got %d@%d %v %v", off, ts, ok, err)
	}
}

// TestRetentionFollowsCleanupPolicy: retention.ms and retention.bytes delete
// segments only where cleanup.policy includes delete; a compacted-only log
// (the internal topics) keeps every segment, yet still drops those wholly
// below its log start offset.
func TestRetentionFollowsCleanupPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		policy  CleanupPolicy
		deleted int
	}{
		{"delete", CleanupDelete, 4},
		{"compact", CleanupCompact, 0},
		{"compact,delete", CleanupCompact | CleanupDelete, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cfg.SegmentBytes = 1000
			e.cfg.RetentionMs = 10_000
			e.cfg.RetentionBytes = 1
			e.cfg.CleanupPolicy = tc.policy
			l := e.open(0)
			defer l.Close()
			for range 5 {
				recs := logtest.Values(1, 800)
				recs[0].Key = []byte("k") // compacted logs take keyed records only
				mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli()}, recs...), 0)
				e.clk.Advance(time.Hour)
			}
			// Any number of passes: the first deletes what retention
			// allows, later ones nothing more.
			for pass := range 3 {
				n, err := l.ApplyRetention(e.clk.Now())
				if err != nil {
					t.Fatal(err)
				}
				want := tc.deleted
				if pass > 0 {
					want = 0
				}
				if n != want {
					t.Fatalf("pass %d deleted %d segments, want %d", pass, n, want)
				}
			}
			if got, want := l.StartOffset(), int64(tc.deleted); got != want {
				t.Fatalf("log start offset %d, want %d", got, want)
			}
			// DeleteRecords' log start offset is honoured whatever the policy.
			if err := l.SetStartOffset(4); err != nil {
				t.Fatal(err)
			}
			if _, err := l.ApplyRetention(e.clk.Now()); err != nil {
				t.Fatal(err)
			}
			if first := l.Segments()[0].BaseOffset; first != 4 {
				t.Fatalf("first segment at %d after log start 4", first)
			}
		})
	}
}

// BatchSize is the size of the batch Read returns first, whatever
// maxBytes, and agrees with Read on the bound and the range.
func TestBatchSize(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	for i := range 3 {
		mustAppend(t, l, e.batch(i+1, 50), 0) // offsets [0], [1,2], [3,5]
	}
	for _, offset := range []int64{0, 1, 2, 3, 5} {
		first, err := l.Read(nil, offset, 0, l.EndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		if size, err := l.BatchSize(offset, l.EndOffset()); err != nil || size != len(first) || size == 0 {
			t.Fatalf("BatchSize(%d) = %d, %v; Read returns a first batch of %d", offset, size, err, len(first))
		}
	}
	if size, err := l.BatchSize(3, 5); err != nil || size != 0 {
		t.Fatalf("BatchSize of a batch past the bound = %d, %v; want 0", size, err)
	}
	if size, err := l.BatchSize(6, 6); err != nil || size != 0 {
		t.Fatalf("BatchSize at the log end = %d, %v; want 0", size, err)
	}
	if _, err := l.BatchSize(7, 7); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("BatchSize past the log end: %v, want ErrOffsetOutOfRange", err)
	}
}
