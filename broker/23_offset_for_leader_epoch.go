package broker

// OffsetForLeaderEpoch (key 23), versions 2-4 (Kafka 4.0 removed 0-1).
//
// For each partition this node leads: the end offset of the requested
// leader epoch, from the partition's leader-epoch cache
// (partition.EndOffsetForEpoch), as Kafka's ReplicaManager and
// Partition.lastOffsetForLeaderEpoch answer it. Consumers send it to check
// for truncation after a leader change (KIP-320). The current leader epoch,
// unless -1, is checked first: FENCED_LEADER_EPOCH when older than the
// partition's (any other negative epoch too), UNKNOWN_LEADER_EPOCH when
// newer, on a follower too, before NOT_LEADER_OR_FOLLOWER (Kafka's
// Partition.getLocalLog order). An epoch the cache cannot
// place answers NONE with epoch and offset -1. The replica id (v3+) changes
// nothing: Kafka answers consumers (-1) and followers alike, from the
// leader only. Each distinct partition is answered once (see
// duplicates.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleOffsetForLeaderEpoch(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	img := n.ctrl.Image()
	topics := mergeTopics(req.Topics, func(t *kmsg.OffsetForLeaderEpochRequestTopic) string { return t.Topic },
		func(t *kmsg.OffsetForLeaderEpochRequestTopic) *[]kmsg.OffsetForLeaderEpochRequestTopicPartition {
			return &t.Partitions
		},
		func(p kmsg.OffsetForLeaderEpochRequestTopicPartition) int32 { return p.Partition })
	// A follower's needs CLUSTER_ACTION, a consumer's DESCRIBE on each
	// topic.
	clusterDenied := req.ReplicaID >= 0 && !n.authorizeCluster(rc, kmsg.ACLOperationClusterAction)
	described := n.topicsAllowed(rc, kmsg.ACLOperationDescribe)
	for _, rt := range topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			p, perr := n.localReplica(img, rt.Topic, rp.Partition)
			switch {
			case clusterDenied:
				sp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			case req.ReplicaID < 0 && !described(rt.Topic):
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case perr != nil:
				sp.ErrorCode = perr.Code
			default:
				if rp.CurrentLeaderEpoch < -1 {
					// Only -1 means "no epoch" here (ReplicaManager.
					// lastOffsetForLeaderEpoch); CheckLeader skips every
					// negative epoch, as Fetch does.
					sp.ErrorCode = kerr.FencedLeaderEpoch.Code
					break
				}
				if err := p.CheckLeader(rp.CurrentLeaderEpoch); err != nil {
					sp.ErrorCode = errorCode(err)
					break
				}
				sp.LeaderEpoch, sp.EndOffset = p.EndOffsetForEpoch(rp.LeaderEpoch)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
