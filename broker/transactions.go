package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/store/log"
)

// txnTopic is the internal topic holding transaction coordinator state, in
// Kafka's record schemas.
const txnTopic = "__transaction_state"

// newTxnStateTopic describes __transaction_state: its keys are
// transactional ids, and the partitions this node leads are loaded into the
// transaction coordinator at their leader epoch, the coordinator epoch its
// markers carry, so a new epoch reloads them.
func (n *Node) newTxnStateTopic() *internalTopic {
	return &internalTopic{
		name:             txnTopic,
		coordinator:      "transaction",
		settings:         func(s *config.Settings) config.InternalTopicSettings { return s.TransactionStateTopic },
		compression:      "uncompressed",
		notLeader:        txn.ErrNotLeader,
		reloadOnNewEpoch: true,
		load:             func(ctx context.Context, p, epoch int32) error { return n.txns.LoadPartitionEpoch(ctx, p, epoch) },
		unload:           func(p int32) { n.txns.UnloadPartition(p) },
		loaded:           make(map[int32]int32),
	}
}

// newTxnCoordinator builds the node's transaction coordinator.
func (n *Node) newTxnCoordinator() *txn.Coordinator {
	s := n.settings()
	return txn.New(txn.Config{
		Logger:         n.logger.With("component", "txn"),
		Store:          txnStore{internalStore{n, n.txnState}},
		Markers:        txnMarkers{n},
		ProducerIDs:    n.nextProducerID,
		Partitions:     s.TransactionStateTopic.Partitions,
		PartitionCount: func() int32 { return n.txnState.partitions(n.ctrl.Image(), n.settings()) },
		Topics: func() map[string]txn.TopicInfo {
			img := n.ctrl.Image()
			out := make(map[string]txn.TopicInfo, len(img.Topics))
			for name, t := range img.Topics {
				out[name] = txn.TopicInfo{Name: name, ID: t.ID, Partitions: int32(len(t.Partitions))}
			}
			return out
		},
		GroupPartition: func(g string) txn.TopicPartition {
			return txn.TopicPartition{Topic: offsetsTopic, Partition: n.offsets.partitionFor(n.ctrl.Image(), n.settings(), g)}
		},
		MaxTimeout:                s.Transaction.MaxTimeout,
		AbortTimedOutInterval:     s.Transaction.AbortTimedOutInterval,
		TransactionalIDExpiration: s.Transaction.TransactionalIDExpiration,
	})
}

// txnStore keeps the transaction coordinator's records in
// __transaction_state.
type txnStore struct{ internalStore }

func (s txnStore) Append(_ context.Context, p int32, records []txn.Record) error {
	kv := make([]internalRecord, len(records))
	for i, r := range records {
		kv[i] = internalRecord{key: r.Key, value: r.Value}
	}
	return s.append(p, kv, -1, -1)
}

func (s txnStore) Replay(ctx context.Context, p int32, fn func(txn.Record) error) error {
	return s.replay(ctx, p, func(r internalRecord) error {
		if r.control {
			return nil
		}
		return fn(txn.Record{Key: r.key, Value: r.value})
	})
}

// txnMarkers writes transaction markers to the partitions of a transaction.
// Every partition is local while klog runs one node; a partition led
// elsewhere is an error the coordinator retries.
type txnMarkers struct{ n *Node }

func (m txnMarkers) WriteMarkers(_ context.Context, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, partitions []txn.TopicPartition) error {
	var errs []error
	for _, tp := range partitions {
		part, err := m.n.internalPartition(tp.Topic, tp.Partition)
		if err != nil {
			if _, ok := m.n.ctrl.Image().Topic(tp.Topic); !ok {
				continue // deleted since it joined the transaction: nothing to end
			}
			errs = append(errs, err)
			continue
		}
		_, err = part.AppendMarker(log.Marker{
			ProducerID:       producerID,
			ProducerEpoch:    producerEpoch,
			Commit:           commit,
			CoordinatorEpoch: coordinatorEpoch,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("marker for %s-%d: %w", tp.Topic, tp.Partition, err))
			continue
		}
		if tp.Topic == offsetsTopic {
			m.n.groups.CompleteTransaction(tp.Partition, producerID, commit)
		}
	}
	return errors.Join(errs...)
}
