package inspect

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MaxTailRecords bounds the records one Tail returns, all partitions
// together.
const MaxTailRecords = 1000

// tailTimeout bounds the read of one Tail.
const tailTimeout = 5 * time.Second

// TailRecord is one record read by Tail, with its batch's attributes.
type TailRecord struct {
	Partition int32
	Offset    int64
	// Timestamp is unix milliseconds; LogAppendTime says the broker set
	// it (message.timestamp.type=LogAppendTime).
	Timestamp     int64
	LogAppendTime bool
	Key, Value    []byte // nil is null
	Headers       []RecordHeader
	// The batch's: its codec (none, gzip, snappy, lz4, zstd), whether it
	// is transactional, its leader epoch and producer.
	Compression   string
	Transactional bool
	LeaderEpoch   int32
	ProducerID    int64
	ProducerEpoch int16
}

// RecordHeader is one header of a record.
type RecordHeader struct {
	Key   string
	Value []byte
}

// Tail reads the last n records of each partition of topic (below each
// high watermark, read_uncommitted: records of open and aborted
// transactions too, marked Transactional), newest first; n is cut so that
// no more than MaxTailRecords come back. The read goes through a client
// of newClient and is bounded by a few seconds; what was read by then is
// returned with the error.
func Tail(ctx context.Context, adm *kadm.Client, newClient ClientFunc, topic string, n int) ([]TailRecord, error) {
	offs, err := ListOffsets(ctx, adm, []string{topic}, nil)
	if err != nil {
		return nil, err
	}
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil {
		return nil, fmt.Errorf("topic %q: %w", topic, ErrTopicNotFound)
	}
	n = max(1, min(n, MaxTailRecords/max(len(d.Partitions), 1)))
	from := map[int32]kgo.Offset{}
	ends := map[int32]int64{}
	for _, p := range d.Partitions.Sorted() {
		o, err := offs.Lookup(topic, p.Partition)
		if err != nil || o.HighWatermark <= o.LogStart {
			continue
		}
		from[p.Partition] = kgo.NewOffset().At(max(o.LogStart, o.HighWatermark-int64(n)))
		ends[p.Partition] = o.HighWatermark
	}
	if len(from) == 0 {
		return []TailRecord{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, tailTimeout)
	defer cancel()
	cl, err := newClient(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []TailRecord
	for len(ends) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return sortTail(out), fmt.Errorf("tail %s: %w", topic, err)
		}
		if err := fs.Err0(); err != nil {
			return sortTail(out), fmt.Errorf("tail %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := ends[r.Partition]
			if !ok || r.Offset >= end {
				if ok {
					delete(ends, r.Partition) // a gap (cleaning) took its last offset
				}
				return
			}
			if r.Offset == end-1 {
				delete(ends, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			out = append(out, tailRecord(r))
		})
	}
	return sortTail(out), nil
}

func tailRecord(r *kgo.Record) TailRecord {
	t := TailRecord{
		Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(), LogAppendTime: r.Attrs.TimestampType() == 1,
		Key: r.Key, Value: r.Value, Transactional: r.Attrs.IsTransactional(), LeaderEpoch: r.LeaderEpoch,
		ProducerID: r.ProducerID, ProducerEpoch: r.ProducerEpoch,
	}
	switch r.Attrs.CompressionType() {
	case 0:
		t.Compression = "none"
	case 1:
		t.Compression = "gzip"
	case 2:
		t.Compression = "snappy"
	case 3:
		t.Compression = "lz4"
	case 4:
		t.Compression = "zstd"
	default:
		t.Compression = fmt.Sprint(r.Attrs.CompressionType())
	}
	for _, h := range r.Headers {
		t.Headers = append(t.Headers, RecordHeader{Key: h.Key, Value: h.Value})
	}
	return t
}

// sortTail orders records newest first: by timestamp, then partition and
// offset.
func sortTail(rs []TailRecord) []TailRecord {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		switch {
		case a.Timestamp != b.Timestamp:
			return a.Timestamp > b.Timestamp
		case a.Partition != b.Partition:
			return a.Partition < b.Partition
		}
		return a.Offset > b.Offset
	})
	if rs == nil {
		rs = []TailRecord{}
	}
	return rs
}
