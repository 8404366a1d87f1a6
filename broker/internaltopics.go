package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/coordinator"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
)

// internalTopic describes one coordinator's internal topic — the group
// coordinator's __consumer_offsets, the transaction coordinator's
// __transaction_state: how the topic is created, how many partitions its
// keys hash over, and how the node hands the partitions it leads to the
// coordinator. Both coordinators use it the same way: FindCoordinator
// ensures the topic, reconcile hands partitions over (coordinator.Handoff),
// and the coordinator's Store reads and writes them
// (coordinator.PartitionStore).
type internalTopic struct {
	name string
	// settings picks the topic's creation settings from the broker's.
	settings func(*config.Settings) config.InternalTopicSettings
	// compression is the compression.type the topic is created with.
	compression string
	// acksAll makes the coordinator's writes acks=all appends
	// (coordinator.PartitionStore.MinInSync), as Kafka's
	// TransactionStateManager appends with EnforcedRequiredAcks (-1).
	// Without it a write is Kafka's group coordinator's acks=1 append.
	// Either way a write is answered only once the high watermark passes
	// it.
	acksAll bool
	// handoff loads and unloads the partitions this node leads; guarded
	// by Node.reconcileMu.
	handoff *coordinator.Handoff
}

// partitions is the number of partitions the topic's keys hash over: the
// topic's own count once it exists (the setting may have changed since it
// was created, or a client may have created the topic, as Kafka lets it),
// else the configured one. The coordinators read it for every key, so
// they follow the topic as it is now.
func (it *internalTopic) partitions(img *metadata.Image, s *config.Settings) int32 {
	if t, ok := img.Topic(it.name); ok {
		return int32(len(t.Partitions))
	}
	return it.settings(s).Partitions
}

// partitionFor is the partition of the topic that holds key, a group or a
// transactional id.
func (it *internalTopic) partitionFor(img *metadata.Image, s *config.Settings, key string) int32 {
	return metadata.CoordinatorPartition(key, it.partitions(img, s))
}

// ensureInternalTopic creates an internal topic on first use, as Kafka does
// when a client first looks for its coordinator: compacted, with the
// configured partitions and replication factor (internalReplicationFactor).
// While fewer brokers are active than that factor it creates nothing and
// returns errInternalTopicReplicas, which FindCoordinator answers
// COORDINATOR_NOT_AVAILABLE, as Kafka does ("internal topic creation will
// fail until the cluster size meets this replication factor requirement"):
// clients retry until the other nodes have registered, and the topic is
// never created under-replicated for good.
func (n *Node) ensureInternalTopic(ctx context.Context, it *internalTopic) error {
	img := n.ctrl.Image()
	if _, ok := img.Topic(it.name); ok {
		return nil
	}
	s := it.settings(n.settings())
	rf := internalReplicationFactor(s.ReplicationFactor, img, len(n.settings().QuorumVoters))
	if active := activeBrokers(img); active < int(rf) {
		return fmt.Errorf("create %s: %w: replication factor %d, %d broker(s) active", it.name, errInternalTopicReplicas, rf, active)
	}
	configs := map[string]string{
		"cleanup.policy":   "compact",
		"compression.type": it.compression,
		"segment.bytes":    strconv.Itoa(int(s.SegmentBytes)),
	}
	if s.SegmentBytes < config.MinSegmentBytes {
		// Smaller segments than segment.bytes takes (Kafka 4 would
		// fail to create the topic): for tests of the coordinators'
		// compaction.
		delete(configs, "segment.bytes")
		configs["internal.segment.bytes"] = strconv.Itoa(int(s.SegmentBytes))
	}
	if s.MinISR > 0 {
		configs["min.insync.replicas"] = strconv.Itoa(int(min(int32(rf), s.MinISR)))
	}
	ctx, cancel := context.WithTimeout(ctx, autoCreateTimeout)
	defer cancel()
	_, err := n.ctrl.CreateTopic(ctx, controller.TopicSpec{
		Name:              it.name,
		Partitions:        s.Partitions,
		ReplicationFactor: rf,
		Configs:           configs,
	}, false)
	if err != nil && !errors.Is(err, controller.ErrTopicExists) {
		return fmt.Errorf("create %s: %w", it.name, err)
	}
	n.reconcile()
	return nil
}

// internalReplicationFactor is the replication factor an internal topic is
// created with: the configured one (Kafka's default is 3) capped at the
// cluster's size. The size is the larger of the voters (every voter is a
// broker too) and the brokers ever registered, fenced ones included, so a
// single node, one voter, creates the topic with one replica, while a node
// of klog up -n 3 that has registered before its peers waits for them
// rather than create the topic with fewer replicas than the cluster has;
// a broker-only node beyond the voters counts once it has registered.
// voters is len(controller.quorum.voters), 0 for a single node.
func internalReplicationFactor(configured int16, img *metadata.Image, voters int) int16 {
	size := max(len(img.Brokers), voters, 1)
	return int16(min(int(configured), size))
}

// activeBrokers counts the brokers replicas can be placed on: registered,
// not fenced, not shutting down.
func activeBrokers(img *metadata.Image) int {
	active := 0
	for _, b := range img.Brokers {
		if b.Active() {
			active++
		}
	}
	return active
}

// reconcileInternalTopic loads into the coordinator every partition of an
// internal topic this node leads, at its leader epoch, and unloads the
// others. Called from reconcile, which holds reconcileMu.
func (n *Node) reconcileInternalTopic(img *metadata.Image, it *internalTopic) {
	it.handoff.Reconcile(n.ctx, img, n.cfg.NodeID, &n.wg)
}

// internalStore is the Store of it's coordinator: the partitions of it
// this node leads.
func (n *Node) internalStore(it *internalTopic) *coordinator.PartitionStore {
	s := &coordinator.PartitionStore{Topic: it.name, Leader: n.internalPartition, Now: n.clock.Now}
	if it.acksAll {
		s.MinInSync = func(part *partition.Partition) int { return n.internalMinISR(it.name, part) }
	}
	return s
}

// topicInfos lists the current topics for the coordinators.
func (n *Node) topicInfos() map[string]coordinator.TopicInfo {
	img := n.ctrl.Image()
	out := make(map[string]coordinator.TopicInfo, len(img.Topics))
	for name, t := range img.Topics {
		out[name] = coordinator.TopicInfo{Name: name, ID: t.ID, Partitions: int32(len(t.Partitions))}
	}
	return out
}

// internalPartition is partition p of topic if this node leads it.
func (n *Node) internalPartition(topic string, p int32) (*partition.Partition, error) {
	part := n.partition(topic, p)
	if part == nil || !part.IsLeader() {
		return nil, fmt.Errorf("%s-%d is not led here: %w", topic, p, partition.ErrNotLeader)
	}
	return part, nil
}

// internalMinISR is the min.insync.replicas an acks=all write to an
// internal topic partition needs, counting no more than the partition's
// replicas (Kafka 4's Partition.effectiveMinIsr).
func (n *Node) internalMinISR(topic string, part *partition.Partition) int {
	t, ok := n.ctrl.Image().Topic(topic)
	if !ok {
		return 0
	}
	return min(int(n.topicConfig(t).MinInsyncReplicas), len(part.LeaderState().Replicas))
}
