package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/coordinator"
	"github.com/klogdev/klog/broker/metadata"
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
		name:        txnTopic,
		settings:    func(s *config.Settings) config.InternalTopicSettings { return s.TransactionStateTopic },
		compression: "uncompressed",
		acksAll:     true,
		handoff: &coordinator.Handoff{
			Topic:       txnTopic,
			Coordinator: "transaction",
			Load:        func(ctx context.Context, p, epoch int32) error { return n.txns.LoadPartitionEpoch(ctx, p, epoch) },
			Unload:      func(p int32) { n.txns.UnloadPartition(p) },
			Logger:      n.logger,
		},
	}
}

// newTxnCoordinator builds the node's transaction coordinator.
func (n *Node) newTxnCoordinator() *txn.Coordinator {
	s := n.settings()
	return txn.New(txn.Config{
		Logger:         n.logger.With("component", "txn"),
		Store:          n.internalStore(n.txnState),
		Markers:        txnMarkers{n},
		ProducerIDs:    n.nextProducerID,
		Partitions:     s.TransactionStateTopic.Partitions,
		PartitionCount: func() int32 { return n.txnState.partitions(n.ctrl.Image(), n.settings()) },
		Topics:         n.topicInfos,
		GroupPartition: func(g string) txn.TopicPartition {
			return txn.TopicPartition{Topic: offsetsTopic, Partition: n.offsets.partitionFor(n.ctrl.Image(), n.settings(), g)}
		},
		MaxTimeout:                s.Transaction.MaxTimeout,
		AbortTimedOutInterval:     s.Transaction.AbortTimedOutInterval,
		TransactionalIDExpiration: s.Transaction.TransactionalIDExpiration,
		Now:                       n.clock.Now,
	})
}

// txnMarkers writes transaction markers to the partitions of a transaction
// for the node's coordinator, the only writer trusted with any coordinator
// epoch (client-sent WriteTxnMarkers go through
// txn.Coordinator.ClientMarker). A partition this node leads gets its
// marker in-process; the others are sent to their leaders in one
// WriteTxnMarkers per leader, as Kafka's TransactionMarkerChannelManager
// does. A partition that fails, on either path, is returned and the
// coordinator retries it with backoff, looking its leader up again.
type txnMarkers struct{ n *Node }

func (m txnMarkers) WriteMarkers(ctx context.Context, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, txnVersion int16, partitions []txn.TopicPartition) map[txn.TopicPartition]error {
	img := m.n.ctrl.Image()
	// No coordinator ever held an epoch above the highest leader epoch of
	// __transaction_state (epochs only grow): a higher one recorded for the
	// producer was forged by a client and must not fence this marker.
	highest := max(highestTxnStateEpoch(img), coordinatorEpoch)
	marker := log.Marker{
		ProducerID:         producerID,
		ProducerEpoch:      producerEpoch,
		Commit:             commit,
		CoordinatorEpoch:   coordinatorEpoch,
		TransactionVersion: int8(txnVersion),
	}
	var mu sync.Mutex
	var failed map[txn.TopicPartition]error
	fail := func(tp txn.TopicPartition, err error) {
		mu.Lock()
		defer mu.Unlock()
		if failed == nil {
			failed = make(map[txn.TopicPartition]error)
		}
		failed[tp] = err
	}
	remote := make(map[int32][]txn.TopicPartition)
	// Local markers are all appended first, then waited for: their
	// partitions replicate at once.
	type written struct {
		tp   txn.TopicPartition
		part *partition.Partition
		end  int64
	}
	var local []written
	for _, tp := range partitions {
		t, ok := img.Topic(tp.Topic)
		if !ok {
			continue // deleted since it joined the transaction: nothing to end
		}
		if tp.Partition >= 0 && int(tp.Partition) < len(t.Partitions) {
			if leader := t.Partitions[tp.Partition].Leader; leader >= 0 && leader != m.n.cfg.NodeID {
				remote[leader] = append(remote[leader], tp)
				continue
			}
		}
		part, err := m.n.internalPartition(tp.Topic, tp.Partition)
		if err != nil {
			fail(tp, err)
			continue
		}
		end, err := m.n.appendMarker(part, tp.Topic, tp.Partition, marker, highest)
		if err != nil {
			fail(tp, fmt.Errorf("marker for %s-%d: %w", tp.Topic, tp.Partition, markerFenced(err)))
			continue
		}
		local = append(local, written{tp, part, end})
	}
	var wg sync.WaitGroup
	for leader, tps := range remote {
		wg.Go(func() {
			for tp, err := range txn.SendMarkers(ctx, m.n.peers, leader, producerID, producerEpoch, commit, coordinatorEpoch, txnVersion, tps) {
				fail(tp, err)
			}
		})
	}
	for _, w := range local {
		if err := markerCommitted(ctx, w.part, w.end); err != nil {
			fail(w.tp, err)
		}
	}
	wg.Wait()
	return failed
}

// markerFenced marks the errors of a marker that no retry can write: a
// newer producer or coordinator epoch wrote to the partition.
func markerFenced(err error) error {
	if errors.Is(err, log.ErrTransactionCoordinatorFenced) || errors.Is(err, log.ErrInvalidProducerEpoch) {
		return fmt.Errorf("%w: %w", txn.ErrMarkerFenced, err)
	}
	return err
}

// highestTxnStateEpoch is the highest leader epoch of any partition of
// __transaction_state: no coordinator of the cluster writes markers at a
// higher coordinator epoch.
func highestTxnStateEpoch(img *metadata.Image) int32 {
	var highest int32
	if t, ok := img.Topic(txnTopic); ok {
		for _, p := range t.Partitions {
			highest = max(highest, p.LeaderEpoch)
		}
	}
	return highest
}

// appendMarker writes a marker to a partition this node leads; a producer's
// recorded coordinator epoch above maxCoordinatorEpoch does not fence it
// (math.MaxInt32: every one does). A marker in __consumer_offsets also
// completes the producer's transactional offset commits there. It returns
// the offset after the marker, which the high watermark must pass before
// the marker counts as written (markerCommitted).
func (n *Node) appendMarker(p *partition.Partition, topic string, index int32, m log.Marker, maxCoordinatorEpoch int32) (int64, error) {
	offset, err := p.AppendCoordinatorMarker(m, maxCoordinatorEpoch)
	if err != nil {
		return 0, err
	}
	if topic == offsetsTopic {
		n.groups.CompleteTransaction(index, m.ProducerID, m.Commit)
	}
	return offset + 1, nil
}

// markerCommitted waits until the high watermark of p passes end, the
// offset after a marker appendMarker wrote: Kafka appends markers with
// acks=all (ReplicaManager.appendRecords from handleWriteTxnMarkersRequest),
// so a coordinator never completes a transaction whose marker the
// partition's next leader may not have.
func markerCommitted(ctx context.Context, p *partition.Partition, end int64) error {
	if err := coordinator.WaitCommitted(ctx, p, end); err != nil {
		return fmt.Errorf("marker for %s-%d at %d not replicated: %w", p.Topic(), p.Index(), end-1, err)
	}
	return nil
}

// txnCoordinatorNode is the node coordinating transactional id id, the
// leader of its __transaction_state partition: this node (where the
// coordinator answers for itself, NOT_COORDINATOR or
// COORDINATOR_LOAD_IN_PROGRESS included) when the topic or its leader is
// unknown.
func (n *Node) txnCoordinatorNode(id string) int32 {
	img := n.ctrl.Image()
	t, ok := img.Topic(txnTopic)
	if !ok || len(t.Partitions) == 0 {
		return n.cfg.NodeID
	}
	if leader := t.Partitions[n.txnState.partitionFor(img, n.settings(), id)].Leader; leader >= 0 {
		return leader
	}
	return n.cfg.NodeID
}

// verifyTxnPartition is txn.Coordinator.VerifyPartition on the coordinator
// of the transactional id, which may be another node: there it is an
// AddPartitionsToTxn v4 with VerifyOnly, as Kafka's partition leaders
// send through AddPartitionsToTxnManager.
func (n *Node) verifyTxnPartition(ctx context.Context, id string, producerID int64, producerEpoch int16, tp txn.TopicPartition) error {
	coordinator := n.txnCoordinatorNode(id)
	if coordinator == n.cfg.NodeID {
		return n.txns.VerifyPartition(ctx, id, producerID, producerEpoch, tp)
	}
	return txn.AddPartitionRemote(ctx, n.peers, coordinator, 4, true, id, producerID, producerEpoch, tp)
}

// addTxnPartition is txn.Coordinator.AddPartition (transaction version 2)
// on the coordinator of the transactional id: elsewhere an
// AddPartitionsToTxn v5, retried on CONCURRENT_TRANSACTIONS as the local
// call retries it.
func (n *Node) addTxnPartition(ctx context.Context, id string, producerID int64, producerEpoch int16, tp txn.TopicPartition) error {
	coordinator := n.txnCoordinatorNode(id)
	if coordinator == n.cfg.NodeID {
		return n.txns.AddPartition(ctx, id, producerID, producerEpoch, tp)
	}
	return txn.RetryConcurrent(ctx, func() error {
		return txn.AddPartitionRemote(ctx, n.peers, coordinator, 5, false, id, producerID, producerEpoch, tp)
	})
}
