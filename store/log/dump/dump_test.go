package dump_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/dump"
	"github.com/klogdev/klog/store/log/dump/dumptest"
	"github.com/klogdev/klog/store/log/record"
)

func segmentPath(w dumptest.Written, base int64, ext string) string {
	return filepath.Join(w.Dir, fmt.Sprintf("%020d%s", base, ext))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// readBatches walks every segment of w with dump.Segment.
func readBatches(t *testing.T, w dumptest.Written) []dump.Batch {
	t.Helper()
	var out []dump.Batch
	for _, s := range w.Segments {
		seg, err := dump.OpenSegment(segmentPath(w, s.BaseOffset, ".log"))
		if err != nil {
			t.Fatal(err)
		}
		for seg.Next() {
			out = append(out, seg.Batch())
		}
		if seg.Err() != nil || seg.Stopped() != nil {
			t.Fatalf("walk of segment %d: %v %v", s.BaseOffset, seg.Err(), seg.Stopped())
		}
		seg.Close()
	}
	return out
}

func TestSegmentShowsEveryBatch(t *testing.T) {
	w := dumptest.WritePartition(t)
	if len(w.Segments) < 3 {
		t.Fatalf("want several segments, got %d", len(w.Segments))
	}
	batches := readBatches(t, w)
	codecs := map[string]int{}
	var commit, abort *dump.Batch
	next := int64(0)
	for i := range batches {
		b := &batches[i]
		if b.BaseOffset != next {
			t.Errorf("batch %d: base offset %d, want %d", i, b.BaseOffset, next)
		}
		next = b.LastOffset + 1
		if !b.CRCValid || b.Magic != 2 || b.PartitionLeaderEpoch != 1 {
			t.Errorf("batch at %d: crc valid %v, magic %d, leader epoch %d", b.BaseOffset, b.CRCValid, b.Magic, b.PartitionLeaderEpoch)
		}
		codecs[b.Compression]++
		switch b.LastOffset {
		case w.Commit:
			commit = b
		case w.Abort:
			abort = b
		}
	}
	if next != w.End {
		t.Errorf("batches end at %d, log at %d", next, w.End)
	}
	for _, c := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		if codecs[c] == 0 {
			t.Errorf("no %s batch in %v", c, codecs)
		}
	}
	if commit == nil || commit.Marker == nil || commit.Marker.Type != "COMMIT" || commit.Marker.CoordinatorEpoch != 3 ||
		!commit.Control || !commit.Transactional || commit.ProducerID != 7 {
		t.Errorf("commit marker batch: %+v", commit)
	}
	if abort == nil || abort.Marker == nil || abort.Marker.Type != "ABORT" || abort.Marker.CoordinatorEpoch != 4 || abort.ProducerID != 8 {
		t.Errorf("abort marker batch: %+v", abort)
	}
	for i := range batches {
		b := &batches[i]
		if b.ProducerID == 8 && !b.Control && (!b.Transactional || b.ProducerEpoch != 0 || b.BaseSequence != 0 || b.LastSequence != 1) {
			t.Errorf("transactional batch: %+v", b)
		}
		if b.ProducerID < 0 && (b.BaseSequence != -1 || b.LastSequence != -1) {
			t.Errorf("batch without producer: sequences %d..%d", b.BaseSequence, b.LastSequence)
		}
	}
}

func TestRecordsMatchWhatWasAppended(t *testing.T) {
	w := dumptest.WritePartition(t)
	var dec record.Decompressor
	defer dec.Close()
	i := 0
	for _, s := range w.Segments {
		seg, err := dump.OpenSegment(segmentPath(w, s.BaseOffset, ".log"))
		if err != nil {
			t.Fatal(err)
		}
		for seg.Next() {
			err := dump.Records(seg.Raw(), &dec, func(r *dump.Record) error {
				want := w.Records[i]
				i++
				if r.Offset != want.Offset || r.Timestamp != want.Timestamp || !bytes.Equal(r.Key, want.Key) || (r.Key == nil) != (want.Key == nil) ||
					!bytes.Equal(r.Value, want.Value) || (r.Value == nil) != (want.Value == nil) || len(r.Headers) != len(want.Headers) {
					t.Errorf("record %d: got %+v, want %+v", i-1, r, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		seg.Close()
	}
	if i != len(w.Records) {
		t.Errorf("read %d records, appended %d", i, len(w.Records))
	}
}

// allFiles lists every file of the partition and the data directory's
// checkpoints.
func allFiles(t *testing.T, w dumptest.Written) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{w.Dir, w.DataDir} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !e.IsDir() && dump.KindOf(e.Name()) != dump.KindUnknown {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

func TestVerifyCleanPartition(t *testing.T) {
	w := dumptest.WritePartition(t)
	kinds := map[dump.Kind]bool{}
	for _, f := range allFiles(t, w) {
		kinds[dump.KindOf(f)] = true
		probs, err := dump.Verify(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Errorf("clean file: %s", p)
		}
	}
	for _, k := range []dump.Kind{dump.KindLog, dump.KindOffsetIndex, dump.KindTimeIndex, dump.KindTxnIndex, dump.KindSnapshot,
		dump.KindLeaderEpochs, dump.KindPartitionMetadata, dump.KindOffsetCheckpoint} {
		if !kinds[k] {
			t.Errorf("no %s file verified", k)
		}
	}
}

// flip flips one byte of a file.
func flip(t *testing.T, path string, pos int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[pos] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func verifyOne(t *testing.T, path string) []dump.Problem {
	t.Helper()
	probs, err := dump.Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	return probs
}

func TestVerifyFindsFlippedRecordByte(t *testing.T) {
	w := dumptest.WritePartition(t)
	seg := segmentPath(w, w.Segments[0].BaseOffset, ".log")
	batches := readBatches(t, w)
	victim := batches[1] // in the first segment
	flip(t, seg, victim.Position+int64(record.HeaderSize)+3)
	probs := verifyOne(t, seg)
	if len(probs) != 1 {
		t.Fatalf("problems %v, want one", probs)
	}
	p := probs[0]
	if p.BaseOffset == nil || *p.BaseOffset != victim.BaseOffset || *p.Position != victim.Position || !strings.Contains(p.Message, "CRC mismatch") {
		t.Errorf("problem %s, want a CRC mismatch of the batch at offset %d position %d", p, victim.BaseOffset, victim.Position)
	}
	want := seg + ": batch at offset " + itoa(victim.BaseOffset) + " (position " + itoa(victim.Position) + "): CRC mismatch"
	if !strings.HasPrefix(p.String(), want) {
		t.Errorf("problem %q, want it to start %q", p, want)
	}
}

func TestVerifyFindsCorruptIndexEntry(t *testing.T) {
	w := dumptest.WritePartition(t)
	base := w.Segments[0].BaseOffset
	idx := segmentPath(w, base, ".index")
	es, err := dump.ReadOffsetIndex(idx)
	if err != nil || len(es) < 3 {
		t.Fatalf("index entries %v, %v", es, err)
	}
	// Entry 1 names the offset of entry 2's batch: still ordered, but
	// pointing at a batch that ends elsewhere.
	b, _ := os.ReadFile(idx)
	binary.BigEndian.PutUint32(b[8:], uint32(es[2].Offset-base-1))
	if err := os.WriteFile(idx, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{segmentPath(w, base, ".log"), idx} {
		probs := verifyOne(t, path)
		if len(probs) != 1 || probs[0].File != idx || probs[0].Entry == nil || *probs[0].Entry != 1 ||
			!strings.Contains(probs[0].Message, "the batch ending at offset "+itoa(es[1].Offset)) {
			t.Errorf("verify %s: %v, want entry 1 of %s pointing at the batch ending at %d", path, probs, idx, es[1].Offset)
		}
	}
}

func TestVerifyFindsBadTimeAndTxnIndex(t *testing.T) {
	w := dumptest.WritePartition(t)
	var abortSeg int64 = -1
	for _, s := range w.Segments {
		if w.Abort >= s.BaseOffset && w.Abort < s.NextOffset {
			abortSeg = s.BaseOffset
		}
	}
	txn := segmentPath(w, abortSeg, ".txnindex")
	es, err := dump.ReadTxnIndex(txn)
	if err != nil || len(es) != 1 || es[0].LastOffset != w.Abort || es[0].ProducerID != 8 {
		t.Fatalf("txn index %v, %v; want the abort at %d", es, err, w.Abort)
	}
	b, _ := os.ReadFile(txn)
	binary.BigEndian.PutUint64(b[2:], 9) // another producer
	os.WriteFile(txn, b, 0o644)
	if probs := verifyOne(t, txn); len(probs) != 1 || !strings.Contains(probs[0].Message, "producer 8's, not producer 9's") {
		t.Errorf("txn index problems %v", probs)
	}

	tidx := segmentPath(w, w.Segments[0].BaseOffset, ".timeindex")
	b, _ = os.ReadFile(tidx)
	binary.BigEndian.PutUint64(b[12:], binary.BigEndian.Uint64(b[12:])+100000) // entry 1's timestamp
	os.WriteFile(tidx, b, 0o644)
	probs := verifyOne(t, tidx)
	if len(probs) == 0 || *probs[0].Entry != 1 || !strings.Contains(probs[0].Message, "max timestamp") {
		t.Errorf("time index problems %v", probs)
	}
}

func TestVerifyFindsOffsetsGoingBack(t *testing.T) {
	w := dumptest.WritePartition(t)
	seg := segmentPath(w, w.Segments[0].BaseOffset, ".log")
	batches := readBatches(t, w)
	b, _ := os.ReadFile(seg)
	// The base offset precedes the CRC: only the offset check sees it.
	binary.BigEndian.PutUint64(b[batches[2].Position:], uint64(batches[1].BaseOffset))
	os.WriteFile(seg, b, 0o644)
	probs := verifyOne(t, seg)
	found := false
	for _, p := range probs {
		if p.BaseOffset != nil && *p.Position == batches[2].Position && strings.Contains(p.Message, "not above the previous batch's last offset") {
			found = true
		}
	}
	if !found {
		t.Errorf("problems %v, want the batch at position %d going back", probs, batches[2].Position)
	}
}

func TestVerifyTruncatedSegment(t *testing.T) {
	w := dumptest.WritePartition(t)
	seg := segmentPath(w, w.Segments[0].BaseOffset, ".log")
	st, _ := os.Stat(seg)
	if err := os.Truncate(seg, st.Size()-5); err != nil {
		t.Fatal(err)
	}
	probs := verifyOne(t, seg)
	if len(probs) != 1 || !strings.Contains(probs[0].Message, "cut short") {
		t.Errorf("problems %v, want one batch cut short", probs)
	}
}

func TestVerifySnapshotCRC(t *testing.T) {
	w := dumptest.WritePartition(t)
	var snap string
	for _, f := range allFiles(t, w) {
		if dump.KindOf(f) == dump.KindSnapshot {
			snap = f
		}
	}
	es, err := dump.ReadSnapshot(snap)
	if err != nil || len(es) != 2 || es[0].ProducerID != 7 || es[1].ProducerID != 8 || es[1].CoordinatorEpoch != 4 || es[1].CurrentTxnFirstOffset != -1 {
		t.Fatalf("snapshot %v, %v", es, err)
	}
	st, _ := os.Stat(snap)
	flip(t, snap, st.Size()-1)
	if probs := verifyOne(t, snap); len(probs) != 1 || !strings.Contains(probs[0].Message, "snapshot crc") {
		t.Errorf("problems %v", probs)
	}
}

func TestReadDirListsSegments(t *testing.T) {
	w := dumptest.WritePartition(t)
	for _, dir := range []string{w.Dir, w.DataDir} {
		ps, err := dump.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 {
			t.Fatalf("%s: %d partitions", dir, len(ps))
		}
		p := ps[0]
		if p.Topic != dumptest.Topic || p.Partition != dumptest.Partition || p.LogEndOffset != w.End || p.TopicID != "AQIDBAUGBwgJCgsMDQ4PEA" {
			t.Errorf("partition %+v", p)
		}
		if p.LogStartOffset == nil || *p.LogStartOffset != 0 || p.RecoveryPoint == nil || *p.RecoveryPoint != w.End || p.HighWatermark == nil || *p.HighWatermark != w.End {
			t.Errorf("checkpointed offsets: start %v, recovery %v, hw %v; want 0, %d, %d", p.LogStartOffset, p.RecoveryPoint, p.HighWatermark, w.End, w.End)
		}
		if len(p.LeaderEpochs) != 1 || p.LeaderEpochs[0] != (dump.EpochEntry{Epoch: 1, StartOffset: 0}) || len(p.Snapshots) == 0 {
			t.Errorf("epochs %v, snapshots %v", p.LeaderEpochs, p.Snapshots)
		}
		if len(p.Segments) != len(w.Segments) {
			t.Fatalf("%d segments, log had %d", len(p.Segments), len(w.Segments))
		}
		records := int64(0)
		for i, s := range p.Segments {
			ws := w.Segments[i]
			if s.BaseOffset != ws.BaseOffset || s.LastOffset != ws.NextOffset-1 || s.Size != ws.Size || s.IndexEntries != ws.IndexEntries ||
				s.TimeIndexEntries != ws.TimeIndexEntries || s.MaxTimestamp != ws.MaxTimestamp || s.FirstTimestamp != ws.FirstTimestamp ||
				s.AbortedTxns != ws.AbortedTxns || len(s.Problems) > 0 {
				t.Errorf("segment %d: %+v, log saw %+v", i, s, ws)
			}
			if s.Batches == 0 || s.FirstTimestamp < dumptest.Now || s.FirstTimestamp > s.MaxTimestamp {
				t.Errorf("segment %d: %d batches, first timestamp %d", i, s.Batches, s.FirstTimestamp)
			}
			records += s.Records
		}
		if want := int64(len(w.Records)) + 2; records != want { // two markers
			t.Errorf("%d records, want %d", records, want)
		}
	}
}

func TestFindPartition(t *testing.T) {
	w := dumptest.WritePartition(t)
	dirs, err := dump.FindPartition(w.DataDir, log.TopicPartition{Topic: dumptest.Topic, Partition: dumptest.Partition})
	if err != nil || len(dirs) != 1 || dirs[0] != w.Dir {
		t.Errorf("FindPartition: %v, %v; want %s", dirs, err, w.Dir)
	}
	if _, err := dump.FindPartition(w.DataDir, log.TopicPartition{Topic: "nope", Partition: 0}); err == nil {
		t.Error("FindPartition of a missing partition: no error")
	}
}

func TestKindOf(t *testing.T) {
	for name, want := range map[string]dump.Kind{
		"00000000000000000000.log":         dump.KindLog,
		"d/00000000000000001200.snapshot":  dump.KindSnapshot,
		"00000000000000000000.timeindex":   dump.KindTimeIndex,
		"leader-epoch-checkpoint":          dump.KindLeaderEpochs,
		"cleaner-offset-checkpoint":        dump.KindOffsetCheckpoint,
		"recovery-point-offset-checkpoint": dump.KindOffsetCheckpoint,
		"partition.metadata":               dump.KindPartitionMetadata,
		"notes.txt":                        dump.KindUnknown,
	} {
		if got := dump.KindOf(name); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestFiles(t *testing.T) {
	w := dumptest.WritePartition(t)
	all := allFiles(t, w)
	got, err := dump.Files(w.DataDir)
	if err != nil || len(got) != len(all) {
		t.Fatalf("Files(data dir): %v %v, want the %d files %v", got, err, len(all), all)
	}
	part, err := dump.Files(w.Dir)
	if err != nil || len(part) != len(all)-3 || filepath.Dir(part[0]) != w.Dir {
		t.Errorf("Files(partition dir): %v %v", part, err)
	}
	if _, err := dump.Files(t.TempDir()); !errors.Is(err, dump.ErrNotPartition) {
		t.Errorf("Files(empty dir): %v, want ErrNotPartition", err)
	}
}

// TestReadDirOfLocalCluster: klog up -n 2 keeps each node's data in
// node-N; node-0 is a data directory, not partition 0 of topic "node".
func TestReadDirOfLocalCluster(t *testing.T) {
	w := dumptest.WritePartition(t)
	cluster := t.TempDir()
	for _, n := range []string{"node-0", "node-1"} {
		if err := os.CopyFS(filepath.Join(cluster, n), os.DirFS(w.DataDir)); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := dump.ReadDir(cluster)
	if err != nil || len(ps) != 2 || ps[0].Dir != filepath.Join(cluster, "node-0", "orders-0") || ps[1].Dir != filepath.Join(cluster, "node-1", "orders-0") {
		t.Fatalf("ReadDir(cluster): %v", err)
	}
	if ps[1].RecoveryPoint == nil || *ps[1].RecoveryPoint != w.End {
		t.Errorf("node-1's partition lacks its node's checkpoints: %+v", ps[1])
	}
	ps, err = dump.ReadDir(filepath.Join(cluster, "node-0"))
	if err != nil || len(ps) != 1 || ps[0].Topic != dumptest.Topic {
		t.Errorf("ReadDir(node-0): %+v %v", ps, err)
	}
	dirs, err := dump.FindPartition(cluster, log.TopicPartition{Topic: dumptest.Topic, Partition: dumptest.Partition})
	if err != nil || len(dirs) != 2 {
		t.Errorf("FindPartition in the cluster: %v %v", dirs, err)
	}
}

// TestReadDirShowsCleanerCheckpoint: the cleaner's first dirty offset of
// a compacted partition comes from cleaner-offset-checkpoint, and is
// absent (nil) for a partition the file does not name.
func TestReadDirShowsCleanerCheckpoint(t *testing.T) {
	w := dumptest.WritePartition(t)
	ps, err := dump.ReadDir(w.DataDir)
	if err != nil || len(ps) != 1 || ps[0].CleanerCheckpoint != nil {
		t.Fatalf("before any cleaning: %v, %+v", err, ps)
	}
	cp := fmt.Sprintf("0\n1\n%s %d %d\n", dumptest.Topic, dumptest.Partition, w.End-1)
	if err := os.WriteFile(filepath.Join(w.DataDir, log.CleanerOffsetCheckpoint), []byte(cp), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err = dump.ReadDir(w.DataDir)
	if err != nil || len(ps) != 1 {
		t.Fatal(err, ps)
	}
	if c := ps[0].CleanerCheckpoint; c == nil || *c != w.End-1 {
		t.Errorf("cleaner checkpoint %v, want %d", c, w.End-1)
	}
}
