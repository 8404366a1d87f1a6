package inspect

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Trim is one partition's DeleteRecords: the records before Before go.
type Trim struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// LogStart is the log start offset before the trim, Before the
	// offset the log is to start at.
	LogStart int64 `json:"log_start"`
	Before   int64 `json:"before"`
	// LowWatermark is the log start every replica has reached, as the
	// leader answered; -1 until the trim is done or when it failed.
	LowWatermark int64  `json:"low_watermark"`
	Error        string `json:"error,omitempty"`
}

// Partitions checks that the topics and partitions of set exist and
// returns them, a topic given without partitions standing for all of its
// partitions. A topic that does not exist is an error wrapping
// ErrTopicNotFound, a partition ErrPartitionNotFound.
func Partitions(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet) (kadm.TopicsSet, error) {
	return resolvePartitions(ctx, adm, set)
}

// DeleteRecords trims each partition of trims that has no Error yet to its
// Before offset with one DeleteRecords request to each leader, waiting as
// long as adm's timeout for every replica to follow, and fills in each
// one's LowWatermark or Error. The error is the request's when no leader
// answered at all.
func DeleteRecords(ctx context.Context, adm *kadm.Client, trims []Trim) error {
	offsets := make(kadm.Offsets)
	for _, t := range trims {
		if t.Error == "" {
			offsets.AddOffset(t.Topic, t.Partition, t.Before, -1)
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	resps, err := adm.DeleteRecords(ctx, offsets)
	if err != nil && len(resps) == 0 {
		return fmt.Errorf("delete records: %w", err)
	}
	for i := range trims {
		t := &trims[i]
		if t.Error != "" {
			continue
		}
		r, rerr := resps.On(t.Topic, t.Partition, nil)
		switch {
		case rerr != nil:
			t.Error = NoResponse(err).Error()
		case r.Err != nil:
			t.Error = r.Err.Error()
		default:
			t.LowWatermark = r.LowWatermark
		}
	}
	return nil
}
