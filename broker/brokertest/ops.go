package brokertest

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/internal/testkit"
)

// MoveLeader makes node to the leader of topic's partition, through the
// controller as an operator would: a reassignment that makes to the
// partition's first (preferred) replica, adding it in place of the last
// replica when it is not one, then a preferred leader election, retried
// until to is in the ISR. It returns once every running node's metadata
// names to as the leader.
func (c *Cluster) MoveLeader(topic string, partition, to int32) {
	c.t.Helper()
	ctx := testkit.Context(c.t)
	cl := c.Client()
	defer cl.Close()
	adm := kadm.NewClient(cl)
	d := c.partition(cl, topic, partition)
	if d.Leader == to {
		return
	}
	target := append([]int32{to}, slices.DeleteFunc(slices.Clone(d.Replicas), func(r int32) bool { return r == to })...)
	target = target[:len(d.Replicas)]
	if !slices.Equal(target, d.Replicas) {
		req := kadm.AlterPartitionAssignmentsReq{}
		req.Assign(topic, partition, target)
		resps, err := adm.AlterPartitionAssignments(ctx, req)
		if err == nil {
			err = resps.Error()
		}
		if err != nil {
			c.t.Fatalf("brokertest: reassign %s[%d] to %v: %v", topic, partition, target, err)
		}
	}
	set := kadm.TopicsSet{}
	set.Add(topic, partition)
	testkit.WaitFor(c.t, fmt.Sprintf("node %d to lead %s[%d]", to, topic, partition), func() (bool, string) {
		if d := c.partition(cl, topic, partition); d.Leader != to {
			res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
			if err != nil {
				return false, err.Error()
			}
			if err := res[topic][partition].Err; err != nil && !errors.Is(err, kerr.ElectionNotNeeded) {
				return false, fmt.Sprintf("leader %d, replicas %v, isr %v: elect: %v", d.Leader, d.Replicas, d.ISR, err)
			}
			return false, fmt.Sprintf("leader %d, replicas %v, isr %v", d.Leader, d.Replicas, d.ISR)
		}
		for _, n := range c.nodes {
			if !n.Running() {
				continue
			}
			ncl := n.Client()
			d := c.partition(ncl, topic, partition)
			ncl.Close()
			if d.Leader != to {
				return false, fmt.Sprintf("node %d says leader %d", n.id, d.Leader)
			}
		}
		return true, ""
	})
}

// Partition is topic's partition (leader, replicas, ISR, leader epoch)
// in the metadata of the first running node, asked for now.
func (c *Cluster) Partition(topic string, partition int32) kmsg.MetadataResponseTopicPartition {
	c.t.Helper()
	for _, n := range c.nodes {
		if n.Running() {
			cl := n.Client()
			defer cl.Close()
			return c.partition(cl, topic, partition)
		}
	}
	c.t.Fatal("brokertest: Partition of a cluster with no node running")
	return kmsg.MetadataResponseTopicPartition{}
}

// Leader is the leader of topic's partition (-1: none), as Partition
// has it.
func (c *Cluster) Leader(topic string, partition int32) int32 {
	c.t.Helper()
	return c.Partition(topic, partition).Leader
}

// partition is topic's partition in the metadata of the node cl asks.
func (c *Cluster) partition(cl *kgo.Client, topic string, partition int32) kmsg.MetadataResponseTopicPartition {
	c.t.Helper()
	resp, err := metadata(testkit.Context(c.t), cl, topic)
	if err != nil {
		c.t.Fatalf("brokertest: metadata of %s: %v", topic, err)
	}
	t := resp.Topics[0]
	for _, p := range t.Partitions {
		if p.Partition == partition {
			return p
		}
	}
	c.t.Fatalf("brokertest: no partition %s[%d]: %v", topic, partition, kerr.ErrorForCode(t.ErrorCode))
	return kmsg.MetadataResponseTopicPartition{}
}

// metadata asks a node of cl for the metadata of topics, as it has them
// now: kadm's ListTopics may answer from the client's cache (up to
// kgo.MetadataMinAge old).
func metadata(ctx context.Context, cl *kgo.Client, topics ...string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	return req.RequestWith(ctx, cl)
}

// CompactNow compacts every replica of topic (cleanup.policy compact) on
// every running node now, whatever their dirty ratio, as klog topic
// compact does: as far as the active segment, the last stable offset and
// min.compaction.lag.ms allow. It returns each node's passes, by node id.
func (c *Cluster) CompactNow(topic string) map[int32][]broker.Compaction {
	c.t.Helper()
	out := make(map[int32][]broker.Compaction)
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		res, err := n.node.CompactNow(testkit.Context(c.t), topic, -1, false)
		if err != nil {
			c.t.Fatalf("brokertest: compact %s on node %d: %v", topic, n.id, err)
		}
		out[n.id] = res
	}
	return out
}

// RetentionNow runs the retention pass of every running node now
// (broker.Node.RetentionNow): the segments past retention.ms or
// retention.bytes go, all but the active one.
func (c *Cluster) RetentionNow() {
	for _, n := range c.nodes {
		if n.Running() {
			n.node.RetentionNow()
		}
	}
}
