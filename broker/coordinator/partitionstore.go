package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
)

// PartitionStore is the Store of every coordinator: it reads and writes
// the partitions of one internal topic that this node leads. A write is
// one uncompressed batch, answered once the high watermark has passed it:
// a coordinator acts on a write, and answers its client, only once the
// write would survive the leader's loss, as Kafka's coordinator runtime
// completes a write when the high watermark reaches it. A partition this
// node does not lead, or no longer leads, is an error wrapping ErrNotLeader.
type PartitionStore struct {
	// Topic is the internal topic.
	Topic string
	// Leader returns partition p of topic if this node leads it, else an
	// error wrapping partition.ErrNotLeader.
	Leader func(topic string, p int32) (*partition.Partition, error)
	// MinInSync, when set, makes writes acks=all: refused below the
	// min.insync.replicas it gives for part, before the append and after
	// it, as Kafka's transaction coordinator appends. Without it a write
	// is Kafka's group coordinator's acks=1 append.
	MinInSync func(part *partition.Partition) int
	// Now stamps the batches.
	Now func() time.Time
}

// Append writes records as one batch and returns once it is committed.
func (s *PartitionStore) Append(ctx context.Context, p int32, records []Record) error {
	return notLeaderAs(s.append(ctx, p, records, -1, -1))
}

// AppendTransactional writes records committed inside a producer's
// transaction as a transactional batch of that producer (no sequence
// numbers: only its epoch is checked, as for any coordinator write).
func (s *PartitionStore) AppendTransactional(ctx context.Context, p int32, producerID int64, producerEpoch int16, records []Record) error {
	return notLeaderAs(s.append(ctx, p, records, producerID, producerEpoch))
}

// Replay calls fn for every record of partition p from its log start to
// its log end, then waits until the high watermark reaches that end. A
// new leader's high watermark trails the records it holds: Kafka's
// coordinators load to the log end, and a record the old leader answered
// for is among them. A coordinator serves nothing of the partition until
// its load returns, so it answers only from state that is committed.
func (s *PartitionStore) Replay(ctx context.Context, p int32, fn func(Record) error) error {
	return notLeaderAs(s.replay(ctx, p, fn))
}

// notLeaderAs marks a lost partition leadership with ErrNotLeader, so the
// coordinator answers NOT_COORDINATOR and clients look for the new one.
func notLeaderAs(err error) error {
	if errors.Is(err, partition.ErrNotLeader) {
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	}
	return err
}

func (s *PartitionStore) append(ctx context.Context, p int32, records []Record, producerID int64, producerEpoch int16) error {
	part, err := s.Leader(s.Topic, p)
	if err != nil {
		return err
	}
	batch, err := encodeBatch(records, producerID, producerEpoch, s.Now().UnixMilli())
	if err != nil {
		return err
	}
	var opts partition.AppendOptions
	if s.MinInSync != nil {
		opts.MinInSyncReplicas = int64(s.MinInSync(part))
	}
	bs := record.ParseBatches(batch)
	res, err := part.AppendWith(&bs, opts)
	if err != nil {
		return err
	}
	if err := WaitCommitted(ctx, part, res.LastOffset+1); err != nil {
		return fmt.Errorf("%s-%d at %d: %w", s.Topic, p, res.LastOffset, err)
	}
	if isr := len(part.LeaderState().ISR); int64(isr) < opts.MinInSyncReplicas {
		// Kafka's NOT_ENOUGH_REPLICAS_AFTER_APPEND.
		return fmt.Errorf("%s-%d: ISR of %d after the append: %w", s.Topic, p, isr, partition.ErrNotEnoughReplicas)
	}
	return nil
}

func (s *PartitionStore) replay(ctx context.Context, p int32, fn func(Record) error) error {
	part, err := s.Leader(s.Topic, p)
	if err != nil {
		return err
	}
	offset := part.LogStartOffset()
	end := part.LogEndOffset()
	var buf []byte
	for offset < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !part.IsLeader() {
			return fmt.Errorf("replay %s-%d: %w", s.Topic, p, partition.ErrNotLeader)
		}
		buf, err = part.Read(buf[:0], offset, 1<<20, partition.ReadReplica, true)
		if err != nil {
			return fmt.Errorf("replay %s-%d at %d: %w", s.Topic, p, offset, err)
		}
		if len(buf) == 0 {
			break
		}
		next, err := replayBatches(buf, offset, fn)
		if err != nil {
			return fmt.Errorf("replay %s-%d: %w", s.Topic, p, err)
		}
		offset = next
	}
	if err := WaitCommitted(ctx, part, end); err != nil {
		return fmt.Errorf("replay %s-%d: wait for the high watermark to reach %d: %w", s.Topic, p, end, err)
	}
	return nil
}

// WaitCommitted waits until the high watermark of part, which this node
// leads, reaches offset: partition.ErrNotLeader once it no longer leads,
// partition.ErrClosed once it is closed, ctx's error once ctx ends.
func WaitCommitted(ctx context.Context, part *partition.Partition, offset int64) error {
	wake := make(chan struct{}, 1)
	for {
		if !part.IsLeader() {
			return partition.ErrNotLeader
		}
		if part.HighWatermark() >= offset {
			return nil
		}
		// Wait refuses to register once the watermark has moved past
		// offset-1 (the check above raced an advance) or the partition
		// closed.
		if !part.Wait(wake, offset-1, partition.ReadUncommitted) {
			if part.HighWatermark() >= offset {
				return nil
			}
			return partition.ErrClosed
		}
		select {
		case <-wake:
		case <-ctx.Done():
			part.Unwait(wake)
			return ctx.Err()
		}
	}
}

// replayBatches calls fn for every record at or after from in raw, and
// returns the offset after the last batch.
func replayBatches(raw []byte, from int64, fn func(Record) error) (int64, error) {
	next := from
	for len(raw) > 0 {
		b, err := record.Parse(raw)
		if err != nil {
			return next, fmt.Errorf("%w: %v", log.ErrCorrupt, err)
		}
		raw = raw[b.Size():]
		next = b.LastOffset() + 1
		attrs := b.Attributes()
		if attrs.Compression() != record.None {
			return next, fmt.Errorf("%w: compressed batch at offset %d of an internal topic", log.ErrCorrupt, b.BaseOffset())
		}
		it, err := b.Records(nil)
		if err != nil {
			return next, fmt.Errorf("%w: batch %d: %v", log.ErrCorrupt, b.BaseOffset(), err)
		}
		for it.Next() {
			r := it.Record()
			if b.BaseOffset()+int64(r.OffsetDelta) < from {
				continue
			}
			cr := Record{Key: r.Key, Value: r.Value, ProducerID: -1}
			if attrs.Transactional() {
				cr.ProducerID, cr.Transactional = b.ProducerID(), true
			}
			if attrs.Control() {
				// Only transaction markers (abort, commit) end a
				// transaction; other control records carry nothing here.
				key, err := record.ParseControlKey(r.Key)
				if err != nil || !record.EndsTxn(key) {
					continue
				}
				cr.Control, cr.Commit, cr.Transactional = true, key.Type == kmsg.ControlRecordKeyTypeCommit, false
			}
			if err := fn(cr); err != nil {
				return next, err
			}
		}
		if err := it.Err(); err != nil {
			return next, fmt.Errorf("%w: batch %d: %v", log.ErrCorrupt, b.BaseOffset(), err)
		}
	}
	return next, nil
}

// encodeBatch builds an uncompressed v2 batch of records at base offset 0
// (the log assigns the real one); producerID >= 0 makes it a transactional
// batch of that producer, without sequence numbers.
func encodeBatch(records []Record, producerID int64, producerEpoch int16, now int64) ([]byte, error) {
	b := record.NewBuilder(now)
	if producerID >= 0 {
		b.ProducerID, b.ProducerEpoch, b.Transactional = producerID, producerEpoch, true
	}
	for i, rec := range records {
		b.Append(record.Record{OffsetDelta: int32(i), Key: rec.Key, Value: rec.Value})
	}
	return b.Build()
}
