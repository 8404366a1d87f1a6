package broker

// OffsetFetch (key 9), versions 1-10 (v0 was removed in Kafka 4, KIP-896).
//
// Served by the group coordinator (broker/group): one group (v0-7) or many
// (v8+), all partitions when none are named (v2+), RequireStable (v7+).
// Each distinct group, topic and partition is answered once (Kafka answers
// every repetition; see duplicates.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleOffsetFetch(n *Node, ctx context.Context, _ *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	req.Topics = mergeTopics(req.Topics, func(t *kmsg.OffsetFetchRequestTopic) string { return t.Topic },
		func(t *kmsg.OffsetFetchRequestTopic) *[]int32 { return &t.Partitions }, identity[int32])
	req.Groups = mergeOffsetFetchGroups(req.Groups)
	return n.groups.OffsetFetch(ctx, req), nil
}

// mergeOffsetFetchGroups folds the groups of an OffsetFetch (v8+) into one
// entry per group id, in order of first appearance, asking for the union of
// the partitions its entries ask for (every partition when one of them
// does), each once. The member id and epoch are the first entry's.
func mergeOffsetFetchGroups(groups []kmsg.OffsetFetchRequestGroup) []kmsg.OffsetFetchRequestGroup {
	type topicKey struct {
		name string
		id   [16]byte
	}
	index := make(map[string]int, len(groups))
	all := make(map[string]bool, len(groups)) // some entry asks for every partition
	var out []kmsg.OffsetFetchRequestGroup
	for _, g := range groups {
		j, ok := index[g.Group]
		if !ok {
			j = len(out)
			index[g.Group] = j
			out = append(out, g)
			out[j].Topics = nil
		}
		if g.Topics == nil {
			all[g.Group] = true
		}
		out[j].Topics = append(out[j].Topics, g.Topics...)
	}
	for j := range out {
		g := &out[j]
		if all[g.Group] {
			g.Topics = nil
			continue
		}
		if g.Topics == nil {
			g.Topics = []kmsg.OffsetFetchRequestGroupTopic{} // asked for none
		}
		g.Topics = mergeTopics(g.Topics,
			func(t *kmsg.OffsetFetchRequestGroupTopic) topicKey { return topicKey{t.Topic, t.TopicID} },
			func(t *kmsg.OffsetFetchRequestGroupTopic) *[]int32 { return &t.Partitions }, identity[int32])
	}
	return out
}
