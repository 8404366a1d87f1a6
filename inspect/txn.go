package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Transaction is one transactional id as its coordinator describes it.
// StartTime is null when no transaction is open. Error is present, and Err
// set, when the id could not be described; Err wraps
// ErrTransactionNotFound and kerr.TransactionalIDNotFound when the
// coordinator does not know the id.
type Transaction struct {
	TransactionalID string `json:"transactional_id"`
	Coordinator     int32  `json:"coordinator"`
	State           string `json:"state"`
	ProducerID      int64  `json:"producer_id"`
	ProducerEpoch   int16  `json:"producer_epoch"`
	// Principal is who got the producer id, from the coordinator's
	// admin API (klog only; TransactionPrincipals); "" when unknown.
	Principal  string            `json:"principal,omitempty"`
	TimeoutMs  int32             `json:"timeout_ms"`
	StartTime  *int64            `json:"start_time_ms"`
	Partitions []TopicPartitions `json:"partitions"`
	Error      string            `json:"error,omitempty"`
	Err        error             `json:"-"`
}

// ListTransactionIDs lists the transactional ids the cluster's coordinators
// know, sorted. states (the coordinator's spelling) keeps only ids in those
// states; none keeps all.
//
// When no coordinator answers it returns nil and the error. When some do
// not, it returns what the others know (never nil) together with their
// error.
func ListTransactionIDs(ctx context.Context, adm *kadm.Client, states ...string) ([]string, error) {
	listed, listErr := adm.ListTransactions(ctx, nil, states)
	if listErr != nil && len(listed) == 0 {
		return nil, fmt.Errorf("list transactions: %w", listErr)
	}
	ids := []string{}
	for _, l := range listed.Sorted() {
		// Brokers that predate the state filter ignore it.
		if len(states) > 0 && !containsFold(states, l.State) {
			continue
		}
		ids = append(ids, l.TxnID)
	}
	return ids, listErr
}

// DescribeTransactions describes transactional ids, in the order given; an
// id that cannot be described carries its error. The error is non-nil only
// when no coordinator answered. It first waits for the ids' coordinators
// (WaitCoordinators).
func DescribeTransactions(ctx context.Context, adm *kadm.Client, ids []string) ([]Transaction, error) {
	txns := make([]Transaction, 0, len(ids))
	if len(ids) == 0 {
		return txns, nil // kadm would describe every id
	}
	WaitCoordinators(ctx, adm, TransactionCoordinator, ids...)
	byID := make(map[string]Transaction, len(ids))
	todo := ids
	err := reach(ctx, adm, func() error {
		described, err := adm.DescribeTransactions(ctx, todo...)
		if described == nil && err != nil {
			return err
		}
		var again []string
		for _, id := range todo {
			byID[id] = transactionFromDescribed(id, described, err)
			if unreachable(byID[id].Err) {
				again = append(again, id)
			}
		}
		todo = again
		if len(again) > 0 {
			return byID[again[0]].Err
		}
		return nil
	})
	if len(byID) == 0 {
		return nil, fmt.Errorf("describe transactions: %w", err)
	}
	for _, id := range ids {
		txns = append(txns, byID[id])
	}
	return txns, nil
}

// transactionFromDescribed takes one id out of a DescribeTransactions
// answer; reqErr explains an id missing from the answer.
func transactionFromDescribed(id string, described kadm.DescribedTransactions, reqErr error) Transaction {
	t := Transaction{TransactionalID: id, Coordinator: -1, ProducerID: -1, ProducerEpoch: -1, Partitions: []TopicPartitions{}}
	d, ok := described[id]
	switch {
	case !ok:
		t.Err = NoResponse(reqErr)
	case errors.Is(d.Err, kerr.TransactionalIDNotFound):
		t.Coordinator, t.Err = d.Coordinator, fmt.Errorf("%w (%w)", ErrTransactionNotFound, d.Err)
	case d.Err != nil:
		t.Coordinator, t.Err = d.Coordinator, d.Err
	}
	if t.Err != nil {
		t.Error = t.Err.Error()
		return t
	}
	t.Coordinator, t.State = d.Coordinator, d.State
	t.ProducerID, t.ProducerEpoch, t.TimeoutMs = d.ProducerID, d.ProducerEpoch, d.TimeoutMillis
	if d.StartTimestamp >= 0 && d.State != "Empty" {
		st := d.StartTimestamp
		t.StartTime = &st
	}
	if d.Topics != nil {
		t.Partitions = sortedPartitions(d.Topics)
	}
	return t
}

// Producer is one active producer of a partition as its leader reports it.
// CurrentTxnStartOffset is -1 when the producer has no open transaction.
type Producer struct {
	ProducerID            int64 `json:"producer_id"`
	ProducerEpoch         int16 `json:"producer_epoch"`
	LastSequence          int32 `json:"last_sequence"`
	LastTimestamp         int64 `json:"last_timestamp_ms"`
	CoordinatorEpoch      int32 `json:"coordinator_epoch"`
	CurrentTxnStartOffset int64 `json:"current_txn_start_offset"`
}

// PartitionProducers is the active producers of one partition. Error is
// present only when the partition's leader could not describe them.
type PartitionProducers struct {
	Topic     string     `json:"topic"`
	Partition int32      `json:"partition"`
	Leader    int32      `json:"leader"`
	Producers []Producer `json:"producers"`
	Error     string     `json:"error,omitempty"`
}

// resolvePartitions checks that the topics and partitions of set exist and
// fills in all partitions of a topic given without any.
func resolvePartitions(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet) (kadm.TopicsSet, error) {
	details, err := LookupTopics(ctx, adm, set.Topics())
	if err != nil {
		return nil, err
	}
	out := make(kadm.TopicsSet)
	for topic, ps := range set {
		n := int32(len(details[topic].Partitions))
		if len(ps) == 0 {
			for p := range n {
				out.Add(topic, p)
			}
			continue
		}
		for p := range ps {
			if p >= n {
				return nil, fmt.Errorf("topic %q has %d partitions, %s/%d: %w", topic, n, topic, p, ErrPartitionNotFound)
			}
			out.Add(topic, p)
		}
	}
	return out, nil
}

// DescribeProducers describes the active producers of every partition in
// set, a topic given without partitions standing for all of its
// partitions: one entry per partition, sorted by topic and partition.
//
// A topic of set that does not exist is an error wrapping
// ErrTopicNotFound, a partition ErrPartitionNotFound. Otherwise the error
// is non-nil only when no leader answered.
func DescribeProducers(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet) ([]PartitionProducers, error) {
	set, err := resolvePartitions(ctx, adm, set)
	if err != nil {
		return nil, err
	}
	described, err := adm.DescribeProducers(ctx, set)
	if described == nil && err != nil {
		return nil, fmt.Errorf("describe producers: %w", err)
	}
	var parts []PartitionProducers
	for _, tp := range set.Sorted() {
		for _, p := range slices.Sorted(slices.Values(tp.Partitions)) {
			pp := PartitionProducers{Topic: tp.Topic, Partition: p, Leader: -1, Producers: []Producer{}}
			dp, ok := described[tp.Topic].Partitions[p]
			switch {
			case !ok:
				pp.Error = NoResponse(err).Error()
			case dp.Err != nil:
				pp.Leader, pp.Error = dp.Leader, ErrorText(dp.Err, dp.ErrMessage)
			default:
				pp.Leader = dp.Leader
				for _, d := range dp.ActiveProducers.Sorted() {
					pp.Producers = append(pp.Producers, Producer{
						ProducerID:            d.ProducerID,
						ProducerEpoch:         d.ProducerEpoch,
						LastSequence:          d.LastSequence,
						LastTimestamp:         d.LastTimestamp,
						CoordinatorEpoch:      d.CoordinatorEpoch,
						CurrentTxnStartOffset: d.CurrentTxnStartOffset,
					})
				}
			}
			parts = append(parts, pp)
		}
	}
	return parts, nil
}
