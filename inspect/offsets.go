package inspect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Offsets holds the offsets of every partition of some topics, as
// ListOffsets listed them.
type Offsets struct {
	starts, hws, lsos kadm.ListedOffsets
	times             map[int64]kadm.ListedOffsets
}

// PartitionOffsets are one partition's offsets.
type PartitionOffsets struct {
	LogStart         int64
	HighWatermark    int64
	LastStableOffset int64
	// AfterTime maps each timestamp ListOffsets was given (unix
	// milliseconds) to the first offset at or after it; a timestamp past
	// the last record is missing.
	AfterTime map[int64]int64
}

// ListOffsets lists the log start offset, high watermark and last stable
// offset, and the first offset at or after each of timestamps (unix
// milliseconds), of every partition of topics.
//
// A partition whose leader cannot be reached keeps that error beside the
// others' offsets: Lookup returns it for that partition only. The error is
// non-nil only when nothing could be listed (the metadata could not be
// read).
func ListOffsets(ctx context.Context, adm *kadm.Client, topics []string, timestamps []int64) (Offsets, error) {
	var l Offsets
	var err error
	if len(topics) == 0 {
		return l, nil // kadm would list every topic
	}
	if l.starts, err = perPartition(adm.ListStartOffsets(ctx, topics...)); err != nil {
		return l, fmt.Errorf("list start offsets: %w", err)
	}
	if l.hws, err = perPartition(adm.ListEndOffsets(ctx, topics...)); err != nil {
		return l, fmt.Errorf("list end offsets: %w", err)
	}
	if l.lsos, err = perPartition(adm.ListCommittedOffsets(ctx, topics...)); err != nil {
		return l, fmt.Errorf("list last stable offsets: %w", err)
	}
	l.times = make(map[int64]kadm.ListedOffsets, len(timestamps))
	for _, ms := range timestamps {
		lo, err := perPartition(adm.ListOffsetsAfterMilli(ctx, ms, topics...))
		if err != nil {
			return l, fmt.Errorf("list offsets after %s: %w", time.UnixMilli(ms).UTC().Format(time.RFC3339), err)
		}
		l.times[ms] = lo
	}
	return l, nil
}

// perPartition files the error of each failed piece of a ListOffsets
// answer (a leader that could not be reached) under the partitions that
// piece asked for, and returns the answer with a nil error. Any other
// error, or no answer at all, is returned as it is.
func perPartition(list kadm.ListedOffsets, err error) (kadm.ListedOffsets, error) {
	se, ok := errors.AsType[*kadm.ShardErrors](err)
	if !ok || list == nil {
		return list, err
	}
	for _, e := range se.Errs {
		req, ok := e.Req.(*kmsg.ListOffsetsRequest)
		if !ok {
			return list, err
		}
		for _, t := range req.Topics {
			if list[t.Topic] == nil {
				list[t.Topic] = make(map[int32]kadm.ListedOffset)
			}
			for _, p := range t.Partitions {
				if _, ok := list[t.Topic][p.Partition]; !ok {
					list[t.Topic][p.Partition] = kadm.ListedOffset{Topic: t.Topic, Partition: p.Partition, Offset: -1, Err: e.Err}
				}
			}
		}
	}
	return list, nil
}

// Lookup returns one partition's offsets, or why they are missing.
func (l Offsets) Lookup(topic string, partition int32) (PartitionOffsets, error) {
	o := PartitionOffsets{AfterTime: make(map[int64]int64, len(l.times))}
	get := func(lo kadm.ListedOffsets) (int64, error) {
		r, ok := lo.Lookup(topic, partition)
		if !ok {
			// A topic-level failure (the topic is gone) is filed under
			// partition -1.
			if te, ok := lo.Lookup(topic, -1); ok && te.Err != nil {
				return 0, te.Err
			}
			return 0, fmt.Errorf("partition %d: %w", partition, ErrPartitionNotFound)
		}
		return r.Offset, r.Err
	}
	var err error
	if o.LogStart, err = get(l.starts); err != nil {
		return o, err
	}
	if o.HighWatermark, err = get(l.hws); err != nil {
		return o, err
	}
	if o.LastStableOffset, err = get(l.lsos); err != nil {
		return o, err
	}
	for ms, lo := range l.times {
		if t, err := get(lo); err == nil && t >= 0 {
			o.AfterTime[ms] = t
		}
	}
	return o, nil
}
