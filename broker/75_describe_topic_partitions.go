package broker

// DescribeTopicPartitions (key 75), version 0.
//
// The topics and partitions of the metadata image, a page at a time, as
// Kafka's DescribeTopicPartitionsRequestHandler and
// KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse answer them
// (kafka-topics --describe asks this before Metadata). The requested topics
// (all when none are named) are a set, sorted by name, starting at the
// cursor's topic and, for that topic, its partition. At most
// ResponsePartitionLimit partitions are returned (clamped to 1 to
// maxResponsePartitions); when a topic is cut short or the limit is used up
// before the next topic, NextCursor names where to go on. A named topic
// that does not exist is answered UNKNOWN_TOPIC_OR_PARTITION (or
// INVALID_TOPIC_EXCEPTION for an invalid name) without taking from the
// limit; with all topics asked for, only existing ones are listed. A cursor
// whose topic is not among the named ones, or whose partition is negative,
// fails the whole request with INVALID_REQUEST on every named topic.
//
// klog has no ACLs: every topic's authorized operations are all those that
// apply to topics, as Kafka answers with no authorizer. Eligible leader
// replicas (KIP-966) are always empty: a single node has none.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

// maxResponsePartitions caps ResponsePartitionLimit, as Kafka's
// max.request.partition.size.limit does at its default.
const maxResponsePartitions = 2000

func handleDescribeTopicPartitions(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTopicPartitionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	img := n.ctrl.Image()

	all := len(req.Topics) == 0
	cursorTopic, cursorPartition := "", int32(0)
	if req.Cursor != nil {
		cursorTopic, cursorPartition = req.Cursor.Topic, req.Cursor.Partition
	}
	var names []string
	if all {
		names = img.SortedTopicNames()
	} else {
		for _, rt := range req.Topics {
			names = append(names, rt.Topic)
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	names = slices.DeleteFunc(names, func(name string) bool { return name < cursorTopic })
	names = n.describableTopics(rc, resp, names, all)
	if req.Cursor != nil && (cursorPartition < 0 || (!all && !slices.Contains(names, cursorTopic))) {
		for _, rt := range req.Topics {
			st := kmsg.NewDescribeTopicPartitionsResponseTopic()
			st.Topic = kmsg.StringPtr(rt.Topic)
			st.ErrorCode = kerr.InvalidRequest.Code
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}

	remaining := min(max(req.ResponsePartitionLimit, 1), maxResponsePartitions)
	for _, name := range names {
		if remaining == 0 {
			// The limit ran out at a topic boundary: go on from this one.
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name}
			break
		}
		t, ok := img.Topic(name)
		if !ok {
			if all {
				continue
			}
			st := kmsg.NewDescribeTopicPartitionsResponseTopic()
			st.Topic = kmsg.StringPtr(name)
			st.IsInternal = metadata.IsInternalTopic(name)
			st.AuthorizedOperations = n.authorizedOperations(rc, kmsg.ACLResourceTypeTopic, name)
			st.ErrorCode = kerr.UnknownTopicOrPartition.Code
			if metadata.ValidateTopicName(name) != nil {
				st.ErrorCode = kerr.InvalidTopicException.Code
			}
			resp.Topics = append(resp.Topics, st)
			continue
		}
		start := int32(0)
		if name == cursorTopic {
			start = cursorPartition
		}
		count := int32(len(t.Partitions))
		upper := min(count, start+remaining)
		st := describeTopicPartitionsTopic(img, t, start, upper)
		st.AuthorizedOperations = n.authorizedOperations(rc, kmsg.ACLResourceTypeTopic, name)
		resp.Topics = append(resp.Topics, st)
		if upper < count {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: upper}
			break
		}
		remaining -= int32(len(st.Partitions))
	}
	return resp, nil
}

// describeTopicPartitionsTopic is topic t with its partitions [start, upper).
func describeTopicPartitionsTopic(img *metadata.Image, t *metadata.Topic, start, upper int32) kmsg.DescribeTopicPartitionsResponseTopic {
	st := kmsg.NewDescribeTopicPartitionsResponseTopic()
	st.Topic = kmsg.StringPtr(t.Name)
	st.TopicID = t.ID
	st.IsInternal = t.Internal
	st.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	for i := start; i < upper; i++ {
		p := t.Partitions[i]
		sp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		sp.Partition = p.Index
		sp.LeaderID = p.Leader
		sp.LeaderEpoch = p.LeaderEpoch
		sp.Replicas = p.Replicas
		sp.ISR = p.ISR
		sp.EligibleLeaderReplicas = []int32{}
		sp.LastKnownELR = []int32{}
		sp.OfflineReplicas = offlineReplicas(img, p.Replicas)
		st.Partitions = append(st.Partitions, sp)
	}
	return st
}

// describableTopics returns the names rc's principal may DESCRIBE: the
// others are left out of an all-topics answer and, when named, answered
// TOPIC_AUTHORIZATION_FAILED in resp.
func (n *Node) describableTopics(rc *wire.RequestContext, resp *kmsg.DescribeTopicPartitionsResponse, names []string, all bool) []string {
	return slices.DeleteFunc(names, func(name string) bool {
		if all {
			return !n.visible(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name)
		}
		if n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name) {
			return false
		}
		st := kmsg.NewDescribeTopicPartitionsResponseTopic()
		st.Topic, st.ErrorCode = kmsg.StringPtr(name), kerr.TopicAuthorizationFailed.Code
		resp.Topics = append(resp.Topics, st)
		return true
	})
}
