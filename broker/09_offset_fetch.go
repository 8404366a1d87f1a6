package broker

// OffsetFetch (key 9), versions 1-10 (v0 was removed in Kafka 4, KIP-896).
//
// Served by the group coordinator (broker/group): one group (v0-7) or many
// (v8+), all partitions when none are named (v2+), RequireStable (v7+).
// Each distinct group, topic and partition is answered once (Kafka answers
// every repetition; see duplicates.go).

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleOffsetFetch(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	req.Topics = mergeTopics(req.Topics, func(t *kmsg.OffsetFetchRequestTopic) string { return t.Topic },
		func(t *kmsg.OffsetFetchRequestTopic) *[]int32 { return &t.Partitions }, identity[int32])
	req.Groups = mergeOffsetFetchGroups(req.Groups)
	resp := n.groups.OffsetFetch(ctx, req)
	n.authorizeOffsetFetch(rc, req, resp)
	return resp, nil
}

// authorizeOffsetFetch refuses, in an OffsetFetch's answer, the groups
// rc's principal may not DESCRIBE (GROUP_AUTHORIZATION_FAILED) and the
// topics it may not DESCRIBE: TOPIC_AUTHORIZATION_FAILED for a topic
// named, left out of an all-topics answer, as Kafka answers.
func (n *Node) authorizeOffsetFetch(rc *wire.RequestContext, req *kmsg.OffsetFetchRequest, resp *kmsg.OffsetFetchResponse) {
	if req.Version < 8 {
		if code := n.groupDenied(rc, kmsg.ACLOperationDescribe, req.Group); code != 0 {
			resp.ErrorCode, resp.Topics = code, nil
			return
		}
		resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool {
			return req.Topics == nil && !n.visible(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Topic)
		})
		for i := range resp.Topics {
			if req.Topics != nil && n.topicDenied(rc, 0, kmsg.ACLOperationDescribe, resp.Topics[i].Topic, [16]byte{}) != 0 {
				for j := range resp.Topics[i].Partitions {
					p := &resp.Topics[i].Partitions[j]
					p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, nil, kerr.TopicAuthorizationFailed.Code
				}
			}
		}
		return
	}
	for gi := range resp.Groups {
		g := &resp.Groups[gi]
		if code := n.groupDenied(rc, kmsg.ACLOperationDescribe, g.Group); code != 0 {
			g.ErrorCode, g.Topics = code, nil
			continue
		}
		named := gi < len(req.Groups) && req.Groups[gi].Topics != nil
		g.Topics = slices.DeleteFunc(g.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool {
			name := n.topicNameOf(t.Topic, t.TopicID)
			return !named && name != "" && !n.visible(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name)
		})
		for i := range g.Topics {
			if named && n.topicDenied(rc, 0, kmsg.ACLOperationDescribe, g.Topics[i].Topic, g.Topics[i].TopicID) != 0 {
				for j := range g.Topics[i].Partitions {
					p := &g.Topics[i].Partitions[j]
					p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, nil, kerr.TopicAuthorizationFailed.Code
				}
			}
		}
	}
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
