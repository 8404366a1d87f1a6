package dump_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klogdev/klog/store/log/dump"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
)

// FuzzVerifySegment: whatever bytes a .log and its .index hold, reading
// and verifying them never panics; a segment Verify finds nothing wrong
// with is read whole by Segment, every batch with a valid CRC, offsets
// increasing.
func FuzzVerifySegment(f *testing.F) {
	ts := int64(1_700_000_000_000)
	two := logtest.Concat(logtest.BatchWith(logtest.Options{BaseTimestamp: ts}, logtest.Values(2, 10)...),
		logtest.BatchWith(logtest.Options{BaseTimestamp: ts + 1, Compression: 4}, logtest.Values(3, 20)...))
	record.Batch(two[logtest.Size(two):]).SetBaseOffset(2)
	f.Add(two, []byte{0, 0, 0, 1, 0, 0, 0, 0})
	f.Add(logtest.BatchWith(logtest.Options{BaseTimestamp: ts, Compression: 1}, logtest.Values(2, 30)...), []byte{})
	f.Add(record.TxnMarker{ProducerID: 1, Commit: true}.AppendBatch(nil, ts), []byte{})
	f.Add(make([]byte, 61), make([]byte, 8))
	f.Fuzz(func(t *testing.T, seg, idx []byte) {
		dir := t.TempDir()
		logPath := filepath.Join(dir, "00000000000000000000.log")
		if err := os.WriteFile(logPath, seg, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.index"), idx, 0o644); err != nil {
			t.Fatal(err)
		}
		probs, err := dump.Verify(logPath)
		if err != nil {
			t.Fatal(err)
		}
		s, err := dump.OpenSegment(logPath)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var dec record.Decompressor
		defer dec.Close()
		next := int64(0)
		for s.Next() {
			b := s.Batch()
			_ = dump.Records(s.Raw(), &dec, func(*dump.Record) error { return nil })
			if len(probs) == 0 && (!b.CRCValid || b.BaseOffset < next) {
				t.Fatalf("verified clean, but batch %+v (next offset %d)", b, next)
			}
			next = b.LastOffset + 1
		}
		if len(probs) == 0 && (s.Stopped() != nil || s.Err() != nil) {
			t.Fatalf("verified clean, but the walk stopped: %v %v", s.Stopped(), s.Err())
		}
	})
}
