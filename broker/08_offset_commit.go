package broker

// OffsetCommit (key 8), versions 2-10 (v10 names topics by id; v0-1 were
// removed in Kafka 4, KIP-896).
//
// Served by the group coordinator (broker/group): commits are written to
// __consumer_offsets before the answer; group members' commits are checked
// against generation (classic) or member epoch (KIP-848, v9+); an empty
// group accepts commits from non-members (admin tools).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleOffsetCommit(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	groupCode := n.groupDenied(rc, kmsg.ACLOperationRead, req.Group)
	if groupCode != 0 && len(req.Topics) == 0 {
		return req.ResponseKind(), nil
	}
	var resp *kmsg.OffsetCommitResponse
	answers := splitAuthorized(req.Topics,
		func(t *kmsg.OffsetCommitRequestTopic) int16 {
			return n.topicDenied(rc, groupCode, kmsg.ACLOperationRead, t.Topic, t.TopicID)
		},
		func(kept []kmsg.OffsetCommitRequestTopic) []kmsg.OffsetCommitResponseTopic {
			sub := *req
			sub.Topics = kept
			resp = n.groups.OffsetCommit(ctx, &sub)
			return resp.Topics
		},
		func(t *kmsg.OffsetCommitRequestTopic, code int16) kmsg.OffsetCommitResponseTopic {
			st := kmsg.OffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
			for _, p := range t.Partitions {
				st.Partitions = append(st.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
			}
			return st
		})
	if resp == nil {
		resp = req.ResponseKind().(*kmsg.OffsetCommitResponse)
	}
	resp.Topics = answers
	return resp, nil
}
