package broker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// The answers a cluster gives, as Kafka 4.4 gives them (scripts/kafka/
// protodiff -nodes 3 compares them with a 3-node Kafka): with the leader
// of an RF-3 topic stopped, Metadata lists it as an offline replica; a
// follower asked ListOffsets or OffsetForLeaderEpoch with a stale or a
// future current leader epoch answers FENCED_LEADER_EPOCH or
// UNKNOWN_LEADER_EPOCH before NOT_LEADER_OR_FOLLOWER (Kafka's
// Partition.getLocalLog); acks=all below min.insync.replicas is
// NOT_ENOUGH_REPLICAS with the log start offset; DescribeQuorum's messages
// are "".
func TestClusterAnswersAfterFailover(t *testing.T) {
	c := startCluster(t, 3, "broker.heartbeat.interval.ms", "200", "broker.session.timeout.ms", "1500", "min.insync.replicas", "3")
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	const topic = "answers"
	mt := replicatedTopic(t, ctx, c.nodes, topic)
	old := mt.Partitions[0].Leader
	c.stop(int(old))
	var follower, leader int32 = -1, -1
	var p kmsg.MetadataResponseTopicPartition
	testkit.WaitFor(t, "a new leader at epoch 1 and two replicas in sync", func() (bool, string) {
		for i, n := range c.nodes {
			if int32(i) == old {
				continue
			}
			got, err := partitionMetadata(ctx, nodeClient(t, n), topic)
			if err != nil {
				return false, fmt.Sprintf("node %d: %v", i, err)
			}
			p = got.Partitions[0]
			if p.Leader < 0 || p.Leader == old || p.LeaderEpoch != 1 || len(p.ISR) != 2 {
				return false, fmt.Sprintf("node %d: leader %d epoch %d, ISR %v", i, p.Leader, p.LeaderEpoch, p.ISR)
			}
			if part := n.PartitionForTest(topic, 0); part == nil || part.LeaderEpoch() != 1 {
				return false, fmt.Sprintf("node %d: its replica not yet at epoch 1", i)
			}
		}
		leader = p.Leader
		return true, ""
	})
	for _, id := range p.Replicas {
		if id != old && id != leader {
			follower = id
		}
	}

	r := dialRaw(t, c.nodes[follower].Advertised())
	for _, tc := range []struct {
		epoch int32
		want  *kerr.Error
	}{{0, kerr.FencedLeaderEpoch}, {5, kerr.UnknownLeaderEpoch}, {1, kerr.NotLeaderForPartition}, {-1, kerr.NotLeaderForPartition}} {
		lo := kmsg.NewPtrListOffsetsRequest()
		lo.SetVersion(7)
		lo.ReplicaID = -1
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = topic
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = 0, -1, tc.epoch
		lt.Partitions = append(lt.Partitions, lp)
		lo.Topics = append(lo.Topics, lt)
		if got := rawDo[*kmsg.ListOffsetsResponse](t, r, lo).Topics[0].Partitions[0].ErrorCode; got != tc.want.Code {
			t.Errorf("ListOffsets at follower %d, current epoch %d: %v, want %v", follower, tc.epoch, kerr.ErrorForCode(got), tc.want)
		}
		oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
		oe.SetVersion(4)
		oe.ReplicaID = -1
		ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
		ot.Topic = topic
		op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		op.Partition, op.CurrentLeaderEpoch, op.LeaderEpoch = 0, tc.epoch, 0
		ot.Partitions = append(ot.Partitions, op)
		oe.Topics = append(oe.Topics, ot)
		if got := rawDo[*kmsg.OffsetForLeaderEpochResponse](t, r, oe).Topics[0].Partitions[0].ErrorCode; got != tc.want.Code {
			t.Errorf("OffsetForLeaderEpoch at follower %d, current epoch %d: %v, want %v", follower, tc.epoch, kerr.ErrorForCode(got), tc.want)
		}
	}

	// DescribeQuorum v2 carries "" messages, not null, when all is well.
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.SetVersion(2)
	dt := kmsg.NewDescribeQuorumRequestTopic()
	dt.Topic = "__cluster_metadata"
	dt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	dq.Topics = append(dq.Topics, dt)
	q := rawDo[*kmsg.DescribeQuorumResponse](t, r, dq)
	if len(q.Topics) != 1 || len(q.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeQuorum v2: %d topics", len(q.Topics))
	}
	if top, part := q.ErrorMessage, q.Topics[0].Partitions[0].ErrorMessage; top == nil || *top != "" || part == nil || *part != "" {
		t.Errorf("DescribeQuorum v2: messages %v and %v, want \"\" and \"\"", top, part)
	}

	// Two replicas in sync of the three min.insync.replicas asks for.
	pr := produceTo(t, dialRaw(t, c.nodes[leader].Advertised()), mt, -1, 5000, rawBatch("a"))
	if pr.ErrorCode != kerr.NotEnoughReplicas.Code || pr.LogStartOffset != 0 {
		t.Errorf("acks=all with ISR %v below min ISR 3: %v, log start offset %d; want NOT_ENOUGH_REPLICAS, 0", p.ISR, kerr.ErrorForCode(pr.ErrorCode), pr.LogStartOffset)
	}

	// The stopped node is fenced once its session expires (1.5 s).
	testkit.WaitFor(t, fmt.Sprintf("node %d listed as an offline replica", old), func() (bool, string) {
		got, err := partitionMetadata(ctx, nodeClient(t, c.nodes[leader]), topic)
		if err != nil {
			return false, err.Error()
		}
		if o := got.Partitions[0].OfflineReplicas; len(o) != 1 || o[0] != old {
			return false, fmt.Sprintf("offline replicas %v", o)
		}
		return true, ""
	})
}
