package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"log/slog"
	"math"
	"path"
	"testing"
	"time"
	"unsafe"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

func TestSnapshotLayout(t *testing.T) {
	ps := newProducerState(0)
	e := newStagedProducer(7)
	e.applyData(&producerBatch{producerID: 7, epoch: 3, firstSeq: 10, lastSeq: 14, firstOffset: 100, lastOffset: 104, maxTimestamp: 1234, transactional: true})
	e.coordinatorEpoch = 9
	ps.put(&e)
	m := newStagedProducer(2) // a producer known only from a marker
	m.applyMarker(&producerBatch{producerID: 2, epoch: 1, marker: 1, coordinatorEpoch: 4, maxTimestamp: 55})
	ps.put(&m)
	b := encodeSnapshot(&ps)

	want := []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 2}
	entry := func(pid int64, epoch int16, lastSeq int32, lastOff int64, delta int32, ts int64, coord int32, txn int64) {
		want = binary.BigEndian.AppendUint64(want, uint64(pid))
		want = binary.BigEndian.AppendUint16(want, uint16(epoch))
		want = binary.BigEndian.AppendUint32(want, uint32(lastSeq))
		want = binary.BigEndian.AppendUint64(want, uint64(lastOff))
		want = binary.BigEndian.AppendUint32(want, uint32(delta))
		want = binary.BigEndian.AppendUint64(want, uint64(ts))
		want = binary.BigEndian.AppendUint32(want, uint32(coord))
		want = binary.BigEndian.AppendUint64(want, uint64(txn))
	}
	entry(2, 1, -1, -1, 0, 55, 4, -1)
	entry(7, 3, 14, 104, 4, 1234, 9, 100)
	binary.BigEndian.PutUint32(want[2:], crc32.Checksum(want[6:], crc32.MakeTable(crc32.Castagnoli)))
	if !bytes.Equal(b, want) {
		t.Fatalf("snapshot bytes\n got %x\nwant %x", b, want)
	}
	if len(b) != snapshotHeaderSize+2*snapshotEntrySize {
		t.Fatalf("size %d", len(b))
	}

	got, err := decodeSnapshot(b, testTs, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.byID) != 2 || got.byID[7].state() != ps.byID[7].state() || got.byID[2].state() != ps.byID[2].state() {
		t.Fatalf("round trip: %+v", got.byID)
	}
	if got.firstUnstableOffset() != 100 {
		t.Fatalf("open transaction not loaded: first unstable offset %d", got.firstUnstableOffset())
	}
	if m, ok := got.byID[7].find(10, 14); !ok || m.firstOffset() != 100 || m.timestamp != 1234 {
		t.Fatalf("retained batch %+v %v", m, ok)
	}
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x40
		if _, err := decodeSnapshot(bad, testTs, math.MaxInt64); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d: %v", i, err)
		}
	}
	if _, err := decodeSnapshot(b[:len(b)-1], testTs, math.MaxInt64); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short snapshot: %v", err)
	}
}

func TestMarkerAndTxnIndexLayout(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 0, 2, 0, 3, true), 5)
	off, err := l.AppendMarker(Marker{ProducerID: 0, ProducerEpoch: 2, CoordinatorEpoch: 6}, 5)
	if err != nil || off != 3 {
		t.Fatalf("marker at %d: %v", off, err)
	}
	bs := readAllBatches(t, l)
	mk := bs[1]
	if m, ok := logtest.ReadMarker(mk); !ok || m != (logtest.Marker{ProducerID: 0, ProducerEpoch: 2, CoordinatorEpoch: 6}) {
		t.Fatalf("marker %+v %v", m, ok)
	}
	if attrs := record.Batch(mk).Attributes(); attrs != record.Attributes(0).WithTransactional(true).WithControl(true) {
		t.Fatalf("attributes %x", attrs)
	}
	if logtest.BaseSequence(mk) != -1 || logtest.LeaderEpoch(mk) != 5 || logtest.MaxTimestamp(mk) != e.clk.UnixMilli() {
		t.Fatalf("marker header %x", mk[:record.HeaderSize])
	}
	if err := record.Batch(mk).CheckCRC(); err != nil {
		t.Fatal(err)
	}
	// Record: key version 0 type 0 (abort), value version 0 epoch 6.
	wantRec := []byte{32, 0, 0, 0, 8, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 6, 0}
	if !bytes.Equal(record.Batch(mk).RecordBytes(), wantRec) {
		t.Fatalf("record %x", record.Batch(mk).RecordBytes())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := readFile(e.fs, path.Join("/data/t-0", segmentName(0, ".txnindex")), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := txnIndexBytes([4]int64{0, 0, 3, 4}); !bytes.Equal(b, want) {
		t.Fatalf(".txnindex\n got %x\nwant %x", b, want)
	}
}

// txnIndexBytes is a .txnindex of version-0 entries (producer id, first
// offset, last offset, last stable offset).
func txnIndexBytes(entries ...[4]int64) []byte {
	var b []byte
	for _, e := range entries {
		b = append(b, 0, 0)
		for _, v := range e {
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// An abort marker's .txnindex entry is in the file as soon as the marker
// is appended, before any flush, as Kafka writes it: a process killed
// then (SIGKILL keeps what was written) leaves a .txnindex that
// DumpLogSegments and Kafka's recovery agree with.
func TestAbortWritesTxnIndexBeforeFlush(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 0, 2, 0, 3, true), 5)
	if _, err := l.AppendMarker(Marker{ProducerID: 0, ProducerEpoch: 2, CoordinatorEpoch: 6}, 5); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 1, 0, 0, 2, true), 5)
	if _, err := l.AppendMarker(Marker{ProducerID: 1}, 5); err != nil {
		t.Fatal(err)
	}
	b, err := readFile(e.fs, path.Join("/data/t-0", segmentName(0, ".txnindex")), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := txnIndexBytes([4]int64{0, 0, 3, 4}, [4]int64{1, 4, 6, 7})
	if !bytes.Equal(b, want) {
		t.Fatalf(".txnindex before any flush\n got %x\nwant %x", b, want)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if b2, err := readFile(e.fs, path.Join("/data/t-0", segmentName(0, ".txnindex")), 1<<20); err != nil || !bytes.Equal(b2, want) {
		t.Fatalf(".txnindex after the flush: %x, %v; want it unchanged", b2, err)
	}
}

func TestTxnIndexRebuiltWhenMissing(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 200
	l := e.open(0)
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 4, 0, 0, 1, true), 0)
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 5, 0, 0, 1, true), 0)
	if _, err := l.AppendMarker(Marker{ProducerID: 4}, 0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 5, 0, 1, 1, true), 0)
	if _, err := l.AppendMarker(Marker{ProducerID: 5}, 0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, e.batch(1, 10), 0)
	want := l.AbortedTransactions(0, l.EndOffset())
	if len(want) != 2 || len(l.Segments()) < 3 {
		t.Fatalf("aborted %+v over %d segments", want, len(l.Segments()))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Segments() {
		name := path.Join("/data/t-0", segmentName(s.BaseOffset, ".txnindex"))
		if err := e.fs.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	l = e.open(1 << 40) // recovery point beyond the end: no segment is scanned
	defer l.Close()
	got := l.AbortedTransactions(0, l.EndOffset())
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("rebuilt %+v, want %+v", got, want)
	}
}

func TestAppendValidatesProducersAsUnit(t *testing.T) {
	tests := []struct {
		name    string
		batches [][]byte
		err     error
	}{
		{"stale epoch second", [][]byte{logtest.ProducerBatch(testTs, 1, 1, 1, 1, false), logtest.ProducerBatch(testTs, 1, 0, 2, 1, false)}, ErrInvalidProducerEpoch},
		{"gap second", [][]byte{logtest.ProducerBatch(testTs, 1, 1, 1, 1, false), logtest.ProducerBatch(testTs, 1, 1, 3, 1, false)}, ErrOutOfOrderSequence},
		{"txn then plain", [][]byte{logtest.ProducerBatch(testTs, 1, 1, 1, 1, true), logtest.ProducerBatch(testTs, 1, 1, 2, 1, false)}, ErrInvalidTxnState},
		{"other producer bad", [][]byte{logtest.ProducerBatch(testTs, 2, 0, 0, 1, false), logtest.ProducerBatch(testTs, 1, 0, 0, 1, false)}, ErrInvalidProducerEpoch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			l := e.open(0)
			defer l.Close()
			mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 1, 1, 0, 1, false), 0)
			before := l.Producers()
			if _, err := l.Append(logtest.Concat(tc.batches...), 0); !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if l.EndOffset() != 1 || l.FirstUnstableOffset() != -1 {
				t.Fatalf("end %d fuo %d", l.EndOffset(), l.FirstUnstableOffset())
			}
			if after := l.Producers(); len(after) != len(before) || after[0] != before[0] {
				t.Fatalf("producers changed: %+v -> %+v", before, after)
			}
		})
	}
}

func TestManagerExpireProducers(t *testing.T) {
	e := newEnv(t)
	m, err := OpenManager(e.fs, "/data", ManagerOptions{Logger: testkit.Logger(t, slog.LevelDebug), Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := DefaultConfig()
	cfg.ProducerIDExpirationMs = 1000
	l, err := m.Create("t", 0, [16]byte{1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 1, 0, 0, 1, false), 0)
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 2, 0, 0, 1, true), 0)
	e.clk.Advance(999 * time.Millisecond)
	if n := m.ExpireProducers(e.clk.Now()); n != 0 || len(l.Producers()) != 2 {
		t.Fatalf("%d expired, %d producers left before expiry", n, len(l.Producers()))
	}
	e.clk.Advance(time.Millisecond)
	// Maintain runs on every tick; expiry has its own interval.
	m.Maintain(e.clk.Now())
	if n := len(l.Producers()); n != 2 {
		t.Fatalf("Maintain expired producers: %d left", n)
	}
	if n := m.ExpireProducers(e.clk.Now()); n != 1 {
		t.Fatalf("%d expired, want 1", n)
	}
	ps := l.Producers()
	if len(ps) != 1 || ps[0].ProducerID != 2 {
		t.Fatalf("after expiry: %+v", ps)
	}
	// An expired producer is unknown: any sequence is accepted again.
	if _, err := l.Append(logtest.ProducerBatch(e.clk.UnixMilli(), 1, 0, 7, 1, false), 0); err != nil {
		t.Fatal(err)
	}
}

// appendInventedProducers appends one one-record batch for each of n new
// producer ids from first on, timestamped ts.
func appendInventedProducers(t testing.TB, l *Log, first int64, n int, ts int64) {
	t.Helper()
	bs := make([][]byte, 0, 500)
	for pid := first; pid < first+int64(n); pid++ {
		bs = append(bs, logtest.ProducerBatch(ts, pid, 0, 0, 1, false))
		if len(bs) == cap(bs) || pid == first+int64(n)-1 {
			mustAppend(t, l, logtest.Concat(bs...), 0)
			bs = bs[:0]
		}
	}
}

// TestExpiryBoundsProducers: producers invented by a client are all gone
// one expiration after they wrote, even one whose batch claims a time ten
// years ahead, and the map that held them is given back.
func TestExpiryBoundsProducers(t *testing.T) {
	e := newEnv(t)
	e.cfg.TimestampAfterMaxMs = math.MaxInt64 // the broker's default
	l := e.open(0)
	defer l.Close()
	const n = 3000
	appendInventedProducers(t, l, 0, n, e.clk.UnixMilli())
	future := e.clk.Now().AddDate(10, 0, 0).UnixMilli()
	mustAppend(t, l, logtest.ProducerBatch(future, n, 0, 0, 1, false), 0)
	if got := len(l.Producers()); got != n+1 {
		t.Fatalf("%d producers, want %d", got, n+1)
	}
	if k := l.ExpireProducers(e.clk.Now(), time.Hour); k != 0 {
		t.Fatalf("%d expired before their time", k)
	}
	e.clk.Advance(time.Hour)
	if k := l.ExpireProducers(e.clk.Now(), time.Hour); k != n+1 {
		t.Fatalf("%d expired, want %d; left: %+v", k, n+1, l.Producers()[:min(3, len(l.Producers()))])
	}
	l.mu.Lock()
	peak := l.mu.producers.peak
	l.mu.Unlock()
	if peak != 0 {
		t.Fatalf("map of producers not remade: peak %d", peak)
	}
}

// TestLoadDropsExpiredProducers: state loaded after a restart holds no
// producer the live state would have expired, whether it comes from the
// snapshot (clean close) or from replaying the batches after an older one
// (crash), and a producer comes back with its window.
func TestLoadDropsExpiredProducers(t *testing.T) {
	for _, clean := range []bool{true, false} {
		e := newEnv(t)
		e.cfg.ProducerIDExpirationMs = time.Hour.Milliseconds()
		l := e.open(0)
		appendInventedProducers(t, l, 0, 100, e.clk.UnixMilli())
		e.clk.Advance(30 * time.Minute)
		for seq := range int32(producerBatchesRetained) {
			mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 1000, 0, seq, 1, false), 0)
		}
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		e.fs = e.restartFS(clean, l.Close)
		e.clk.Advance(30 * time.Minute)
		l = e.open(l.EndOffset())
		ps := l.Producers()
		if len(ps) != 1 || ps[0].ProducerID != 1000 || ps[0].LastSequence != producerBatchesRetained-1 {
			t.Fatalf("clean=%v: loaded %d producers, want only 1000: %+v", clean, len(ps), ps[:min(3, len(ps))])
		}
		l.mu.Lock()
		more := l.mu.producers.byID[1000].more
		l.mu.Unlock()
		if more == nil || more.n != producerBatchesRetained {
			t.Fatalf("clean=%v: producer loaded with window %+v, want its %d batches", clean, more, producerBatchesRetained)
		}
		// The first batch still answers as a duplicate.
		r := mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 1000, 0, 0, 1, false), 0)
		if !r.Duplicate {
			t.Fatalf("clean=%v: first batch not a duplicate after restart: %+v", clean, r)
		}
		_ = l.Close()
	}
}

// TestProducerWindow: a producer keeps its window while it has more than
// one batch and goes back to the inline batch on a new epoch.
func TestProducerWindow(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	entry := func() producerEntry {
		l.mu.Lock()
		defer l.mu.Unlock()
		return *l.mu.producers.byID[7]
	}
	for seq := range int32(producerBatchesRetained + 1) {
		mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 7, 0, seq, 1, false), 0)
	}
	if got := entry(); got.more == nil || got.more.n != producerBatchesRetained {
		t.Fatalf("window %+v", got.more)
	}
	for seq := range int32(producerBatchesRetained + 1) {
		r, err := l.Append(logtest.ProducerBatch(e.clk.UnixMilli(), 7, 0, seq, 1, false), 0)
		if dup := seq > 0; err != nil && dup || err == nil && r.Duplicate != dup || r.Duplicate && r.FirstOffset != int64(seq) {
			t.Fatalf("sequence %d again: %+v %v", seq, r, err)
		}
	}
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 7, 1, 0, 1, false), 0)
	if got := entry(); got.more != nil || got.one.lastOffset != l.EndOffset()-1 {
		t.Fatalf("after a new epoch: %+v", got)
	}
}

func TestManagerRestartKeepsProducers(t *testing.T) {
	for _, clean := range []bool{true, false} {
		e := newEnv(t)
		m, err := OpenManager(e.fs, "/data", ManagerOptions{Logger: testkit.Logger(t, slog.LevelDebug), Now: e.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.Create("t", 0, [16]byte{1}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 1, 0, 0, 2, true), 0)
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		want := l.Producers()
		fsys := e.restartFS(clean, m.Close)
		m, err = OpenManager(fsys, "/data", ManagerOptions{Logger: testkit.Logger(t, slog.LevelDebug), Now: e.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		l = m.Get("t", 0)
		got := l.Producers()
		if len(got) != 1 || got[0] != want[0] || l.FirstUnstableOffset() != 0 {
			t.Fatalf("clean=%v: producers %+v want %+v, fuo %d", clean, got, want, l.FirstUnstableOffset())
		}
		r := mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 1, 0, 0, 2, true), 0)
		if !r.Duplicate || r.FirstOffset != 0 || r.LastOffset != 1 {
			t.Fatalf("clean=%v: replay %+v", clean, r)
		}
		_ = m.Close()
	}
}

// testTs is the test clock's start (newClock), in ms.
const testTs = 1_700_000_000_000

// TestProducerEntrySize: what a producer id costs a log, besides its map
// slot, while it has at most one batch retained (doc.go, "Producer state
// memory").
func TestProducerEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(producerEntry{}); got > 64 {
		t.Fatalf("producerEntry is %d bytes, want at most 64", got)
	}
}

// TestUnsequencedBatchesHaveNoLastSequence: batches without sequence
// numbers (a coordinator's offset commits in a transaction) leave the last
// sequence at -1, as Kafka's DefaultRecordBatch.lastSequence, and never
// answer a sequenced batch as its duplicate.
func TestUnsequencedBatchesHaveNoLastSequence(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 5, 0, -1, 3, true), 0)
	if ps := l.Producers(); len(ps) != 1 || ps[0].LastSequence != -1 {
		t.Fatalf("after an unsequenced batch: %+v", ps)
	}
	if _, err := l.AppendMarker(Marker{ProducerID: 5, Commit: true}, 0); err != nil {
		t.Fatal(err)
	}
	// Sequences MaxInt32, 0, 1: the same last sequence and offset delta.
	r := mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 5, 0, math.MaxInt32, 3, false), 0)
	if r.Duplicate || r.FirstOffset != 4 {
		t.Fatalf("sequenced batch after the unsequenced one: %+v", r)
	}
}

// A transactional batch that starts past a lower one still being verified
// with the transaction coordinator is refused: the lower one, refused and
// retried, must not find a later one appended ahead of it (KIP-890's
// verification state, Kafka's ProducerAppendInfo.checkSequence).
func TestVerificationKeepsSequencesInOrder(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	ts := e.clk.UnixMilli()
	// Sequence 0 is being verified (and will be retried); 3 overtakes it.
	l.StartVerification(7, 0, 0)
	l.StartVerification(7, 0, 3)
	if _, err := l.Append(logtest.ProducerBatch(ts, 7, 0, 3, 2, true), 0); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("a batch past the one under verification: %v, want ErrOutOfOrderSequence", err)
	}
	if l.EndOffset() != 0 {
		t.Fatalf("end %d after the refusal", l.EndOffset())
	}
	mustAppend(t, l, logtest.ProducerBatch(ts, 7, 0, 0, 3, true), 0)
	mustAppend(t, l, logtest.ProducerBatch(ts, 7, 0, 3, 2, true), 3)
	// A higher epoch starts over, at its own lowest sequence.
	l.StartVerification(7, 1, 5)
	l.StartVerification(7, 1, 0)
	if _, err := l.Append(logtest.ProducerBatch(ts, 7, 1, 5, 1, true), 0); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("epoch 1 past its lowest sequence: %v, want ErrOutOfOrderSequence", err)
	}
	// Entries expire with producer.id.expiration.ms: an unknown producer
	// may then start at any sequence again.
	l.StartVerification(9, 0, 0)
	e.clk.Advance(2 * time.Second)
	l.ExpireProducers(e.clk.Now(), time.Second)
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 9, 0, 2, 1, true), 5)
}

// TestWindowSurvivesRolls: a producer's last five batches, with segment
// rolls (and so snapshots, which keep its last batch only) between each of
// them, are each answered as a duplicate with its original offsets after a
// restart, clean or not, and on a replica that built its state from the
// leader's batches and then leads, also after it truncated its tail
// (which reloads its state from a snapshot). Markers of the producer's
// epoch between its batches (each a committed transaction) are read past.
func TestWindowSurvivesRolls(t *testing.T) {
	const pid, batches = 7, producerBatchesRetained + 2
	for _, tc := range []string{"clean", "crash", "crash-transactional", "replica", "replica-truncated"} {
		t.Run(tc, func(t *testing.T) {
			e := newEnv(t)
			e.cfg.SegmentBytes = 300
			e.cfg.IndexIntervalBytes = 100
			openAt := func(fsys vfs.FS, dir string) *Log {
				l, err := Open(fsys, dir, e.cfg, Options{Logger: testkit.Logger(t, slog.LevelInfo), Now: e.clk.Now})
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			txn := tc == "crash-transactional"
			produce := func(seq int32) []byte { return logtest.ProducerBatch(testTs, pid, 0, seq, 2, txn) }
			l := openAt(e.fs, "/data/t-0")
			var first []int64 // first offset of each batch of the producer
			for i := range int32(batches) {
				first = append(first, mustAppend(t, l, produce(2*i), 0).FirstOffset)
				if txn {
					if _, err := l.AppendMarker(Marker{ProducerID: pid, Commit: true}, 0); err != nil {
						t.Fatal(err)
					}
				}
				mustAppend(t, l, e.batch(1, 100), 0)
				mustAppend(t, l, e.batch(1, 100), 0)
			}
			if n := len(l.segments()); n < 2*batches {
				t.Fatalf("%d segments: the producer's batches must lie rolls apart", n)
			}
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			switch tc {
			case "clean", "crash", "crash-transactional":
				fsys := e.restartFS(tc == "clean", l.Close)
				l = openAt(fsys, "/data/t-0")
			default:
				follower := openAt(e.fs, "/data/follower/t-0")
				replicate(t, l, follower, 1<<20)
				if tc == "replica-truncated" {
					// A tail the new leader does not have.
					end := l.EndOffset()
					mustAppend(t, l, e.batch(1, 100), 0)
					replicate(t, l, follower, 1<<20)
					if err := follower.Truncate(end); err != nil {
						t.Fatal(err)
					}
				}
				_ = l.Close()
				l = follower
			}
			defer l.Close()
			for i := batches - producerBatchesRetained; i < batches; i++ {
				r, err := l.Append(produce(2*int32(i)), 1)
				if err != nil || !r.Duplicate || r.FirstOffset != first[i] || r.LastOffset != first[i]+1 {
					t.Fatalf("retry of batch %d (offset %d): %+v, %v; want a duplicate", i, first[i], r, err)
				}
			}
			if r := mustAppend(t, l, produce(2*batches), 1); r.Duplicate {
				t.Fatalf("next batch taken as a duplicate: %+v", r)
			}
		})
	}
}
