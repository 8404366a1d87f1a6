package broker

// OffsetDelete (key 47), versions 0-0.
//
// Served by the group coordinator (broker/group): deletes committed offsets
// of partitions the group is not subscribed to (GROUP_SUBSCRIBED_TO_TOPIC
// otherwise). Each distinct partition is answered once, under one entry per
// topic, as Kafka's OffsetDeleteResponse merges them.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleOffsetDelete(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.OffsetDeleteRequest)
	r.Topics = mergeTopics(r.Topics, func(t *kmsg.OffsetDeleteRequestTopic) string { return t.Topic },
		func(t *kmsg.OffsetDeleteRequestTopic) *[]kmsg.OffsetDeleteRequestTopicPartition { return &t.Partitions },
		func(p kmsg.OffsetDeleteRequestTopicPartition) int32 { return p.Partition })
	if code := n.groupDenied(rc, kmsg.ACLOperationDelete, r.Group); code != 0 {
		resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	var resp *kmsg.OffsetDeleteResponse
	answers := splitAuthorized(r.Topics,
		func(t *kmsg.OffsetDeleteRequestTopic) int16 {
			return n.topicDenied(rc, 0, kmsg.ACLOperationRead, t.Topic, [16]byte{})
		},
		func(kept []kmsg.OffsetDeleteRequestTopic) []kmsg.OffsetDeleteResponseTopic {
			sub := *r
			sub.Topics = kept
			resp = n.groups.OffsetDelete(ctx, &sub)
			return resp.Topics
		},
		func(t *kmsg.OffsetDeleteRequestTopic, code int16) kmsg.OffsetDeleteResponseTopic {
			st := kmsg.OffsetDeleteResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				st.Partitions = append(st.Partitions, kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
			}
			return st
		})
	if resp == nil {
		resp = r.ResponseKind().(*kmsg.OffsetDeleteResponse)
	}
	resp.Topics = answers
	return resp, nil
}
