package inspect

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
)

// ErrNoOpenTransaction reports that no producer has an open transaction
// starting at the offset given.
var ErrNoOpenTransaction = errors.New("no open transaction starts at this offset")

// OpenTransaction returns the producer whose open transaction on
// topic/partition starts at startOffset, as the partition's leader
// describes its producers; ErrNoOpenTransaction when none does.
func OpenTransaction(ctx context.Context, adm *kadm.Client, topic string, partition int32, startOffset int64) (Producer, error) {
	set := make(kadm.TopicsSet)
	set.Add(topic, partition)
	parts, err := DescribeProducers(ctx, adm, set)
	if err != nil {
		return Producer{}, err
	}
	p := parts[0]
	if p.Error != "" {
		return Producer{}, fmt.Errorf("describe producers of %s/%d: %s", topic, partition, p.Error)
	}
	for _, pr := range p.Producers {
		if pr.CurrentTxnStartOffset == startOffset {
			return pr, nil
		}
	}
	return Producer{}, fmt.Errorf("%s/%d@%d: %w", topic, partition, startOffset, ErrNoOpenTransaction)
}

// AbortTransaction writes an abort marker for producer p's open
// transaction to topic/partition (WriteTxnMarkers with p's epoch and
// coordinator epoch), which closes it there and releases the partition's
// last stable offset. It bypasses the transaction coordinator: it is for
// hanging transactions no coordinator will finish. It is the one function
// of this package that changes the cluster; klog txn abort and the TUI's
// abort key share it.
func AbortTransaction(ctx context.Context, adm *kadm.Client, topic string, partition int32, p Producer) error {
	set := make(kadm.TopicsSet)
	set.Add(topic, partition)
	resps, err := adm.WriteTxnMarkers(ctx, kadm.TxnMarkers{
		ProducerID:       p.ProducerID,
		ProducerEpoch:    p.ProducerEpoch,
		Commit:           false,
		CoordinatorEpoch: p.CoordinatorEpoch,
		Topics:           set,
	})
	if err != nil {
		return fmt.Errorf("write abort marker: %w", err)
	}
	r, ok := resps[p.ProducerID].Topics[topic].Partitions[partition]
	switch {
	case !ok:
		return fmt.Errorf("write abort marker: %w", ErrNoResponse)
	case r.Err != nil:
		return fmt.Errorf("write abort marker to %s/%d: %w", topic, partition, r.Err)
	}
	return nil
}
