package inspect

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// runningTxnStates are the states in which the coordinator still drives a
// transaction to its end: its partitions may rightly hold open data.
var runningTxnStates = []string{"Ongoing", "PrepareCommit", "PrepareAbort"}

// HangingTransaction is an open transaction on a partition that no
// coordinator is driving to its end. TransactionalID is null when no
// coordinator knows the producer id at all; CoordinatorState is the state
// of the transactional id otherwise.
type HangingTransaction struct {
	Topic            string  `json:"topic"`
	Partition        int32   `json:"partition"`
	ProducerID       int64   `json:"producer_id"`
	ProducerEpoch    int16   `json:"producer_epoch"`
	CoordinatorEpoch int32   `json:"coordinator_epoch"`
	StartOffset      int64   `json:"start_offset"`
	LastTimestamp    int64   `json:"last_timestamp_ms"`
	TransactionalID  *string `json:"transactional_id"`
	CoordinatorState string  `json:"coordinator_state,omitempty"`
}

// Hanging is what HangingTransactions found.
type Hanging struct {
	// Partitions is every partition examined with its producers; a
	// partition whose producers could not be described carries its Error.
	Partitions []PartitionProducers
	// Transactions is the hanging transactions, sorted by topic,
	// partition and producer id; never nil.
	Transactions []HangingTransaction
}

// HangingTransactions finds the hanging transactions on the partitions of
// topics (none: every topic, internal ones included): a producer whose open
// transaction on a partition was last written more than maxAge before now,
// and whose coordinator is not running a matching transaction (the producer
// id is unknown to every coordinator, or its transactional id is not
// Ongoing, PrepareCommit or PrepareAbort on that partition).
//
// When the partitions were examined but the coordinators could not be
// asked about the candidates, it returns the error with Partitions filled
// in: without the coordinators' view every candidate would look hanging,
// so it names none rather than invite a wrong abort.
func HangingTransactions(ctx context.Context, adm *kadm.Client, topics []string, maxAge time.Duration, now time.Time) (Hanging, error) {
	set := make(kadm.TopicsSet)
	if len(topics) > 0 {
		for _, t := range topics {
			set.Add(t)
		}
	} else {
		details, err := adm.ListTopicsWithInternal(ctx)
		if err != nil {
			return Hanging{}, fmt.Errorf("metadata: %w", err)
		}
		for _, d := range details {
			// A listing of every topic can carry one the client asked
			// about before and that does not exist: nothing to examine.
			if d.Err == nil {
				set.Add(d.Topic)
			}
		}
	}
	var h Hanging
	if len(set) > 0 {
		var err error
		if h.Partitions, err = DescribeProducers(ctx, adm, set); err != nil {
			return Hanging{}, err
		}
	}
	cands := hangingCandidates(h.Partitions, maxAge, now)
	txnIDs := make(map[int64]string)
	var described kadm.DescribedTransactions
	if len(cands) > 0 {
		var pids []int64
		for _, c := range cands {
			pids = append(pids, c.producer.ProducerID)
		}
		listed, err := adm.ListTransactions(ctx, pids, nil)
		if err != nil {
			return h, fmt.Errorf("list transactions of producers %v: %w", pids, err)
		}
		var ids []string
		for _, l := range listed.Sorted() {
			txnIDs[l.ProducerID] = l.TxnID
			ids = append(ids, l.TxnID)
		}
		if len(ids) > 0 {
			if described, err = adm.DescribeTransactions(ctx, ids...); err != nil {
				return h, fmt.Errorf("describe transactions: %w", err)
			}
		}
	}
	h.Transactions = classifyHanging(cands, txnIDs, described)
	return h, nil
}

// openTxnCandidate is a producer's open transaction on one partition.
type openTxnCandidate struct {
	topic     string
	partition int32
	producer  Producer
}

// hangingCandidates returns the open transactions last written more than
// maxAge before now.
func hangingCandidates(parts []PartitionProducers, maxAge time.Duration, now time.Time) []openTxnCandidate {
	var out []openTxnCandidate
	for _, p := range parts {
		for _, d := range p.Producers {
			if d.CurrentTxnStartOffset < 0 {
				continue
			}
			if now.UnixMilli()-d.LastTimestamp <= maxAge.Milliseconds() {
				continue
			}
			out = append(out, openTxnCandidate{topic: p.Topic, partition: p.Partition, producer: d})
		}
	}
	return out
}

// classifyHanging keeps the candidates whose coordinator is not running a
// matching transaction. txnIDs maps producer ids to the transactional ids
// the coordinators list for them; described holds those ids' descriptions.
func classifyHanging(cands []openTxnCandidate, txnIDs map[int64]string, described kadm.DescribedTransactions) []HangingTransaction {
	out := []HangingTransaction{}
	for _, c := range cands {
		h := HangingTransaction{
			Topic:            c.topic,
			Partition:        c.partition,
			ProducerID:       c.producer.ProducerID,
			ProducerEpoch:    c.producer.ProducerEpoch,
			CoordinatorEpoch: c.producer.CoordinatorEpoch,
			StartOffset:      c.producer.CurrentTxnStartOffset,
			LastTimestamp:    c.producer.LastTimestamp,
		}
		id, known := txnIDs[c.producer.ProducerID]
		if known {
			idCopy := id
			h.TransactionalID = &idCopy
			d, ok := described[id]
			if ok && d.Err == nil {
				h.CoordinatorState = d.State
				running := d.ProducerID == c.producer.ProducerID &&
					containsFold(runningTxnStates, d.State) &&
					d.Topics.Lookup(c.topic, c.partition)
				if running {
					continue
				}
			}
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.ProducerID < b.ProducerID
	})
	return out
}
