package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/partition"
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

// txnMarkers writes transaction markers to the partitions of a transaction:
// this node's own inter-broker path, the only one trusted with any
// coordinator epoch (client-sent WriteTxnMarkers go through
// txn.Coordinator.ClientMarker). Every partition is local while klog runs
// one node; a partition led elsewhere is an error the coordinator retries.
type txnMarkers struct{ n *Node }

func (m txnMarkers) WriteMarkers(_ context.Context, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, partitions []txn.TopicPartition) map[txn.TopicPartition]error {
	// No coordinator ever held an epoch above the highest leader epoch of
	// __transaction_state (epochs only grow): a higher one recorded for the
	// producer was forged by a client and must not fence this marker.
	var highest int32
	if t, ok := m.n.ctrl.Image().Topic(txnTopic); ok {
		for _, p := range t.Partitions {
			highest = max(highest, p.LeaderEpoch)
		}
	}
	highest = max(highest, coordinatorEpoch)
	var failed map[txn.TopicPartition]error
	fail := func(tp txn.TopicPartition, err error) {
		if failed == nil {
			failed = make(map[txn.TopicPartition]error)
		}
		failed[tp] = err
	}
	for _, tp := range partitions {
		part, err := m.n.internalPartition(tp.Topic, tp.Partition)
		if err != nil {
			if _, ok := m.n.ctrl.Image().Topic(tp.Topic); !ok {
				continue // deleted since it joined the transaction: nothing to end
			}
			fail(tp, err)
			continue
		}
		if err := m.n.appendMarker(part, tp.Topic, tp.Partition, log.Marker{
			ProducerID:       producerID,
			ProducerEpoch:    producerEpoch,
			Commit:           commit,
			CoordinatorEpoch: coordinatorEpoch,
		}, highest); err != nil {
			if errors.Is(err, log.ErrTransactionCoordinatorFenced) || errors.Is(err, log.ErrInvalidProducerEpoch) {
				err = fmt.Errorf("%w: %w", txn.ErrMarkerFenced, err)
			}
			fail(tp, fmt.Errorf("marker for %s-%d: %w", tp.Topic, tp.Partition, err))
		}
	}
	return failed
}

// appendMarker writes a marker to a partition this node leads; a producer's
// recorded coordinator epoch above maxCoordinatorEpoch does not fence it
// (math.MaxInt32: every one does). A marker in __consumer_offsets also
// completes the producer's transactional offset commits there.
func (n *Node) appendMarker(p *partition.Partition, topic string, index int32, m log.Marker, maxCoordinatorEpoch int32) error {
	if _, err := p.AppendCoordinatorMarker(m, maxCoordinatorEpoch); err != nil {
		return err
	}
	if topic == offsetsTopic {
		n.groups.CompleteTransaction(index, m.ProducerID, m.Commit)
	}
	return nil
}
