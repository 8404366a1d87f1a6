package partition

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/logtest"
)

// TestFetchBounds checks that a fetch reports the offsets that bounded it:
// an open transaction holds the last stable offset, a read_committed read
// stops there, and the aborted transactions come with the records.
func TestFetchBounds(t *testing.T) {
	p := newPartition(t)
	p.SetLeaderState(leaderAt(1))
	appendOK := func(b []byte) {
		t.Helper()
		if _, err := p.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	appendOK(logtest.Batch(logtest.Values(2, 10)...))                    // 0-1
	appendOK(logtest.ProducerBatch(0, 5, 0, 0, 2, true))                 // 2-3, aborted below
	if _, err := p.AppendMarker(log.Marker{ProducerID: 5}); err != nil { // 4
		t.Fatal(err)
	}
	appendOK(logtest.ProducerBatch(0, 6, 0, 0, 1, true)) // 5, left open

	res, err := p.Fetch(nil, 0, 1<<20, ReadCommitted, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.HighWatermark != 6 || res.LastStableOffset != 5 || res.LogStartOffset != 0 {
		t.Fatalf("offsets hw %d lso %d start %d, want 6 5 0", res.HighWatermark, res.LastStableOffset, res.LogStartOffset)
	}
	batches := logtest.Split(res.Records)
	if last := batches[len(batches)-1]; logtest.BaseOffset(last) != 4 {
		t.Fatalf("read_committed read ended with the batch at %d, want the marker at 4", logtest.BaseOffset(last))
	}
	if want := []log.AbortedTxn{{ProducerID: 5, FirstOffset: 2, LastOffset: 4, LastStableOffset: 5}}; !slices.Equal(res.AbortedTransactions, want) {
		t.Fatalf("aborted transactions %+v, want %+v", res.AbortedTransactions, want)
	}

	res, err = p.Fetch(nil, 0, 1<<20, ReadUncommitted, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(logtest.Split(res.Records)); n != 4 || res.AbortedTransactions != nil {
		t.Fatalf("read_uncommitted read %d batches, aborted %v; want 4 and none", n, res.AbortedTransactions)
	}

	// No room and not the first partition: offsets only, even at an
	// offset out of range.
	dst := []byte("x")
	res, err = p.Fetch(dst, 99, 0, ReadCommitted, false)
	if err != nil || len(res.Records) != 1 || res.HighWatermark != 6 {
		t.Fatalf("fetch without room: %d bytes, hw %d, %v", len(res.Records), res.HighWatermark, err)
	}
	res, err = p.Fetch(nil, 99, 1<<20, ReadUncommitted, true)
	if !errors.Is(err, log.ErrOffsetOutOfRange) || res.HighWatermark != 6 || res.LastStableOffset != 5 {
		t.Fatalf("fetch out of range: hw %d lso %d, %v", res.HighWatermark, res.LastStableOffset, err)
	}
}

func TestOffsetsForListOffsets(t *testing.T) {
	p := newPartition(t)
	p.SetLeaderState(leaderAt(1))
	for i, ts := range []int64{1000, 2000} {
		if i == 1 {
			p.SetLeaderState(leaderAt(4))
		}
		if _, err := p.Append(logtest.BatchWith(logtest.Options{BaseTimestamp: ts}, logtest.Values(2, 10)...)); err != nil {
			t.Fatal(err)
		}
	}
	if off, ts, ok, err := p.OffsetForTimestamp(1500); err != nil || !ok || off != 2 || ts != 2000 {
		t.Fatalf("OffsetForTimestamp(1500) = %d %d %v %v, want 2 2000", off, ts, ok, err)
	}
	if _, _, ok, err := p.OffsetForTimestamp(3000); err != nil || ok {
		t.Fatalf("OffsetForTimestamp past the last record found one (%v)", err)
	}
	// An offset at or past the high watermark is not committed yet.
	p.hw.Store(2)
	if _, _, ok, err := p.OffsetForTimestamp(1500); err != nil || ok {
		t.Fatalf("OffsetForTimestamp found an offset past the high watermark (%v)", err)
	}
	p.hw.Store(4)
	if ts, off := p.MaxTimestamp(); ts != 2000 || off != 2 {
		t.Fatalf("MaxTimestamp = %d at %d, want 2000 at 2", ts, off)
	}
	for _, tc := range []struct {
		offset int64
		epoch  int32
	}{{0, 1}, {1, 1}, {2, 4}, {3, 4}} {
		if got := p.LeaderEpochOf(tc.offset); got != tc.epoch {
			t.Errorf("LeaderEpochOf(%d) = %d, want %d", tc.offset, got, tc.epoch)
		}
	}
}

func TestProducers(t *testing.T) {
	p := newPartition(t)
	p.SetLeaderState(leaderAt(1))
	if _, err := p.Append(logtest.ProducerBatch(1234, 8, 3, 0, 2, false)); err != nil {
		t.Fatal(err)
	}
	got := p.Producers()
	if len(got) != 1 || got[0].ProducerID != 8 || got[0].ProducerEpoch != 3 || got[0].LastSequence != 1 || got[0].LastOffset != 1 {
		t.Fatalf("producers %+v, want producer 8 at epoch 3, last sequence 1 at offset 1", got)
	}
}

func TestSnapshot(t *testing.T) {
	p := newPartition(t)
	p.SetLeaderState(leaderAt(2))
	if _, err := p.Append(logtest.Batch(logtest.Values(3, 10)...)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(logtest.ProducerBatch(0, 9, 0, 0, 1, true)); err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	s := p.Snapshot()
	if s.ReplicaLagTimeMaxMs != DefaultReplicaLagTimeMaxMs || s.TakenMs < before || s.TakenMs > time.Now().UnixMilli() {
		t.Fatalf("snapshot taken at %d with lag time max %d; want between %d and now, %d", s.TakenMs, s.ReplicaLagTimeMaxMs, before, DefaultReplicaLagTimeMaxMs)
	}
	want := Snapshot{
		Topic: "t", Index: 0, TopicID: [16]byte{1},
		IsLeader: true, Leader: leaderAt(2),
		LogStartOffset: 0, HighWatermark: 4, LastStableOffset: 3, LogEndOffset: 4,
	}
	if s.Topic != want.Topic || s.Index != want.Index || s.TopicID != want.TopicID || s.IsLeader != want.IsLeader ||
		s.Leader.Leader != want.Leader.Leader || s.Leader.Epoch != want.Leader.Epoch || s.Leader.PartitionEpoch != want.Leader.PartitionEpoch ||
		!slices.Equal(s.Leader.ISR, want.Leader.ISR) || !slices.Equal(s.Leader.Replicas, want.Leader.Replicas) ||
		s.LogStartOffset != want.LogStartOffset || s.HighWatermark != want.HighWatermark ||
		s.LastStableOffset != want.LastStableOffset || s.LogEndOffset != want.LogEndOffset {
		t.Fatalf("snapshot\n%+v\nwant\n%+v", s, want)
	}
	s.Leader.ISR[0] = 9
	if p.LeaderState().ISR[0] != self {
		t.Fatal("snapshot shares the partition's ISR")
	}
	p.SetLeaderState(followerAt(3))
	if s := p.Snapshot(); s.IsLeader || s.Leader.Epoch != 3 {
		t.Fatalf("snapshot as follower: %+v", s)
	}
}
