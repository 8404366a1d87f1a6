package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/store/log"
)

// txnTopic is the internal topic holding transaction coordinator state, in
// Kafka's record schemas.
const txnTopic = "__transaction_state"

// newTxnCoordinator builds the node's transaction coordinator.
func (n *Node) newTxnCoordinator() *txn.Coordinator {
	s := n.settings()
	partitions := s.TransactionStateTopic.Partitions
	if t, ok := n.ctrl.Image().Topic(txnTopic); ok {
		partitions = int32(len(t.Partitions))
	}
	return txn.New(txn.Config{
		Logger:      n.logger.With("component", "txn"),
		Store:       txnStore{n},
		Markers:     txnMarkers{n},
		ProducerIDs: n.nextProducerID,
		Partitions:  partitions,
		Topics: func() map[string]txn.TopicInfo {
			img := n.ctrl.Image()
			out := make(map[string]txn.TopicInfo, len(img.Topics))
			for name, t := range img.Topics {
				out[name] = txn.TopicInfo{Name: name, ID: t.ID, Partitions: int32(len(t.Partitions))}
			}
			return out
		},
		GroupPartition: func(g string) txn.TopicPartition {
			parts := n.settings().OffsetsTopic.Partitions
			if t, ok := n.ctrl.Image().Topic(offsetsTopic); ok {
				parts = int32(len(t.Partitions))
			}
			return txn.TopicPartition{Topic: offsetsTopic, Partition: metadata.CoordinatorPartition(g, parts)}
		},
		MaxTimeout:                s.Transaction.MaxTimeout,
		AbortTimedOutInterval:     s.Transaction.AbortTimedOutInterval,
		TransactionalIDExpiration: s.Transaction.TransactionalIDExpiration,
	})
}

// ensureTxnTopic creates __transaction_state on first use, as Kafka does
// when a client first looks for a transaction coordinator.
func (n *Node) ensureTxnTopic(ctx context.Context) error {
	if _, ok := n.ctrl.Image().Topic(txnTopic); ok {
		return nil
	}
	s := n.settings().TransactionStateTopic
	rf := s.ReplicationFactor
	if live := len(n.ctrl.Image().Brokers); int(rf) > live {
		rf = int16(live)
	}
	ctx, cancel := context.WithTimeout(ctx, autoCreateTimeout)
	defer cancel()
	_, err := n.ctrl.CreateTopic(ctx, controller.TopicSpec{
		Name:              txnTopic,
		Partitions:        s.Partitions,
		ReplicationFactor: rf,
		Configs: map[string]string{
			"cleanup.policy":      "compact",
			"compression.type":    "uncompressed",
			"min.insync.replicas": strconv.Itoa(int(min(int32(rf), s.MinISR))),
			"segment.bytes":       strconv.Itoa(int(s.SegmentBytes)),
		},
	}, false)
	if err != nil && !errors.Is(err, controller.ErrTopicExists) {
		return fmt.Errorf("create %s: %w", txnTopic, err)
	}
	n.reconcile()
	return nil
}

// reconcileTxns loads the transaction state of every __transaction_state
// partition this node leads, at the partition's leader epoch (the
// coordinator epoch its markers carry), and unloads the others.
func (n *Node) reconcileTxns(img *metadata.Image) {
	if n.ctx.Err() != nil {
		return
	}
	t, ok := img.Topic(txnTopic)
	lead := make(map[int32]int32)
	if ok {
		for _, p := range t.Partitions {
			if p.Leader == n.cfg.NodeID {
				lead[p.Index] = p.LeaderEpoch
			}
		}
	}
	for p, epoch := range n.txnsLoaded {
		if e, ok := lead[p]; !ok || e != epoch {
			delete(n.txnsLoaded, p)
			n.txns.UnloadPartition(p)
		}
	}
	for p, epoch := range lead {
		if _, ok := n.txnsLoaded[p]; ok {
			continue
		}
		n.txnsLoaded[p] = epoch
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			if err := n.txns.LoadPartitionEpoch(n.ctx, p, epoch); err != nil && n.ctx.Err() == nil {
				n.logger.Error("load transaction partition", "partition", p, "err", err)
			}
		}()
	}
}

// txnStore keeps the transaction coordinator's records in
// __transaction_state.
type txnStore struct{ n *Node }

func (s txnStore) Append(_ context.Context, p int32, records []txn.Record) error {
	kv := make([]internalRecord, len(records))
	for i, r := range records {
		kv[i] = internalRecord{key: r.Key, value: r.Value}
	}
	return notLeaderAs(s.n.appendInternal(txnTopic, p, kv, -1, -1), txn.ErrNotLeader)
}

func (s txnStore) Replay(ctx context.Context, p int32, fn func(txn.Record) error) error {
	return notLeaderAs(s.n.replayInternal(ctx, txnTopic, p, func(r internalRecord) error {
		if r.control {
			return nil
		}
		return fn(txn.Record{Key: r.key, Value: r.value})
	}), txn.ErrNotLeader)
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
