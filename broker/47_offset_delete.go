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

func handleOffsetDelete(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.OffsetDeleteRequest)
	r.Topics = mergeTopics(r.Topics, func(t *kmsg.OffsetDeleteRequestTopic) string { return t.Topic },
		func(t *kmsg.OffsetDeleteRequestTopic) *[]kmsg.OffsetDeleteRequestTopicPartition { return &t.Partitions },
		func(p kmsg.OffsetDeleteRequestTopicPartition) int32 { return p.Partition })
	return n.groups.OffsetDelete(ctx, r), nil
}
