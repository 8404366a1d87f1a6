package controller

// AlterPartition is the controller half of Kafka's AlterPartition (key 56):
// a partition leader proposes a new ISR, stating the leader and partition
// epochs it knows; the controller checks them in Kafka's order
// (ReplicationControlManager.validateAlterPartitionData) and commits one
// PartitionChange record. Kafka serves it on the controller listener only;
// klog has none, so it is a Go call that the partition leader's node makes
// and that travels, like every proposal, as the record it commits over
// forwarding. No Kafka client sends it.

import (
	"context"
	"fmt"
	"slices"

	"github.com/klogdev/klog/broker/metadata"
)

// AlterPartition changes the ISR of topic's partition to isr on behalf of
// its leader, broker, which knows the partition at leaderEpoch and
// partitionEpoch. It returns the partition's state after the change (or
// the current state when isr is the ISR already). Errors:
// ErrUnknownTopic; ErrFencedLeaderEpoch when leaderEpoch is not the
// partition's; ErrInvalidRequest when broker does not lead it, isr is
// empty or names a non-replica; ErrInvalidUpdateVersion when
// partitionEpoch is not the partition's; ErrIneligibleReplica when isr
// names a fenced or unregistered broker; ErrNewLeaderElected, with the
// new state, when isr left the leader out and another was elected.
//
// The checks run against this node's image, which on the leader's node
// has at least the epochs the leader acts on; the state machine checks
// the epochs again when the change commits.
func (c *Controller) AlterPartition(ctx context.Context, broker int32, topic string, partition, leaderEpoch, partitionEpoch int32, isr []int32) (metadata.Partition, error) {
	img := c.Image()
	t, p, err := c.checkAlterPartition(img, broker, topic, partition, leaderEpoch, partitionEpoch, isr)
	if err != nil {
		return p, err
	}
	ch := buildChange(p, isr, electOnline, eligibleIn(img))
	if !ch.changed(p) {
		return p, nil
	}
	res, err := c.propose(ctx, ch.record(t, p))
	if err != nil {
		return metadata.Partition{}, err
	}
	if res.err != nil {
		return metadata.Partition{}, c.staleChange(res.err)
	}
	np, _ := res.next.Topics[topic].Partition(partition)
	c.log.Info("isr changed", "topic", topic, "partition", partition, "by", broker, "isr", np.ISR, "leader", np.Leader,
		"leader_epoch", np.LeaderEpoch, "partition_epoch", np.PartitionEpoch)
	if np.Leader != broker {
		return np, fmt.Errorf("%w: %s-%d is led by %d at epoch %d", ErrNewLeaderElected, topic, partition, np.Leader, np.LeaderEpoch)
	}
	return np, nil
}

// checkAlterPartition validates an AlterPartition against img and returns
// the topic and the partition's current state.
func (c *Controller) checkAlterPartition(img *metadata.Image, broker int32, topic string, partition, leaderEpoch, partitionEpoch int32, isr []int32) (*metadata.Topic, metadata.Partition, error) {
	t, ok := img.Topic(topic)
	if !ok {
		return nil, metadata.Partition{}, unknownTopic(topic)
	}
	p, ok := t.Partition(partition)
	if !ok {
		return nil, metadata.Partition{}, unknownTopic(topic)
	}
	switch {
	case leaderEpoch != p.LeaderEpoch:
		return t, p, fmt.Errorf("%w: %s-%d has leader epoch %d, not %d", ErrFencedLeaderEpoch, topic, partition, p.LeaderEpoch, leaderEpoch)
	case broker != p.Leader:
		return t, p, fmt.Errorf("%w: broker %d does not lead %s-%d (leader %d)", ErrInvalidRequest, broker, topic, partition, p.Leader)
	case partitionEpoch != p.PartitionEpoch:
		return t, p, fmt.Errorf("%w: %s-%d has partition epoch %d, not %d", ErrInvalidUpdateVersion, topic, partition, p.PartitionEpoch, partitionEpoch)
	case len(isr) == 0:
		return t, p, fmt.Errorf("%w: the proposed isr of %s-%d is empty", ErrInvalidRequest, topic, partition)
	}
	seen := map[int32]bool{}
	for _, r := range isr {
		if seen[r] || !slices.Contains(p.Replicas, r) {
			return t, p, fmt.Errorf("%w: the proposed isr %v of %s-%d is not a set of its replicas %v", ErrInvalidRequest, isr, topic, partition, p.Replicas)
		}
		seen[r] = true
	}
	eligible := eligibleIn(img)
	var bad []int32
	for _, r := range isr {
		if !eligible(r) {
			bad = append(bad, r)
		}
	}
	if len(bad) > 0 {
		return t, p, fmt.Errorf("%w: the proposed isr %v of %s-%d names fenced or unregistered broker(s) %v", ErrIneligibleReplica, isr, topic, partition, bad)
	}
	return t, p, nil
}
