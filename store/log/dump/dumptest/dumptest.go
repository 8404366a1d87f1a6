// Package dumptest writes a small partition to disk with store/log, for
// tests of the offline tools that read one (store/log/dump, klog log):
// batches in every codec, records with null and binary keys, values and
// headers, a committed and an aborted transaction, several segments,
// producer snapshots and the data directory's checkpoints.
package dumptest

import (
	"testing"
	"time"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/vfs"
)

// Topic and Partition name the partition WritePartition writes.
const (
	Topic     = "orders"
	Partition = 0
)

// TopicID is the partition's topic ID.
var TopicID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// Now is the clock of the log written, in unix milliseconds; record
// timestamps are Now plus their offset.
const Now = 1_700_000_000_000

// Record is a record appended, at Offset.
type Record struct {
	Offset    int64
	Timestamp int64
	logtest.Record
}

// Written is what WritePartition wrote.
type Written struct {
	DataDir string
	Dir     string // DataDir/orders-0
	// Records are the data records, in offset order; aborted ones
	// included, markers not.
	Records []Record
	// Segments are the segments as the log saw them when it closed.
	Segments []log.SegmentInfo
	// Commit and Abort are the offsets of the two transaction markers,
	// written with coordinator epochs 3 and 4.
	Commit, Abort int64
	// End is the log end offset.
	End int64
}

// WritePartition writes the partition into a new data directory under
// t.TempDir and closes it cleanly.
func WritePartition(t testing.TB) Written {
	t.Helper()
	p := Written{DataDir: t.TempDir()}
	now := func() time.Time { return time.UnixMilli(Now) }
	m, err := log.OpenManager(vfs.OS(), p.DataDir, log.ManagerOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	cfg := log.DefaultConfig()
	cfg.SegmentBytes = 1024
	cfg.IndexIntervalBytes = 1 // an index entry for every batch
	l, err := m.Create(Topic, Partition, TopicID, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.Dir = l.Dir()
	next := int64(0)
	appendBatch := func(o logtest.Options, recs []logtest.Record) {
		t.Helper()
		o.BaseTimestamp = Now + next
		for i := range recs {
			recs[i].TimestampDelta = int64(i)
		}
		res, err := l.Append(logtest.BatchWith(o, recs...), 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			p.Records = append(p.Records, Record{Offset: res.FirstOffset + int64(i), Timestamp: o.BaseTimestamp + int64(i), Record: r})
		}
		next = res.LastOffset + 1
	}
	for round := range 3 {
		for codec := int8(0); codec <= 4; codec++ {
			appendBatch(logtest.Options{Compression: codec}, []logtest.Record{
				{Key: []byte("k"), Value: []byte("value in codec " + string('0'+rune(codec)))},
				{Key: nil, Value: []byte{0xff, 0x00, byte(round)}, Headers: []logtest.Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}}},
				{Key: []byte{}, Value: nil},
				{Key: []byte("pad"), Value: make([]byte, 100)},
			})
		}
	}
	txn := func(pid int64, commit bool, coordinatorEpoch int32) int64 {
		t.Helper()
		appendBatch(logtest.Options{ProducerID: pid, ProducerEpoch: 0, BaseSequence: 0, Transactional: true},
			[]logtest.Record{{Key: []byte("t"), Value: []byte("in a transaction")}, {Key: []byte("t2"), Value: []byte("in it too")}})
		off, err := l.AppendMarker(log.Marker{ProducerID: pid, ProducerEpoch: 0, Commit: commit, CoordinatorEpoch: coordinatorEpoch, Timestamp: Now + next}, 1)
		if err != nil {
			t.Fatal(err)
		}
		next = off + 1
		return off
	}
	p.Commit = txn(7, true, 3)
	p.Abort = txn(8, false, 4)
	appendBatch(logtest.Options{}, []logtest.Record{{Key: []byte("last"), Value: []byte("after the transactions")}})
	p.End = l.EndOffset()
	if err := m.CheckpointHighWatermarks(map[log.TopicPartition]int64{{Topic: Topic, Partition: Partition}: p.End}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	p.Segments = l.Segments()
	return p
}
