package broker

// DescribeProducers (key 61), version 0.
//
// For each partition this node leads: the producers in its producer state —
// id, epoch, last sequence, last timestamp, coordinator epoch and the first
// offset of the producer's open transaction (-1 if none). Each distinct
// partition is answered once, under one entry per topic (Kafka answers
// every repetition; see duplicates.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleDescribeProducers(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	img := n.ctrl.Image()
	topics := mergeTopics(req.Topics, func(t *kmsg.DescribeProducersRequestTopic) string { return t.Topic },
		func(t *kmsg.DescribeProducersRequestTopic) *[]int32 { return &t.Partitions }, identity[int32])
	readable := n.topicsAllowed(rc, kmsg.ACLOperationRead)
	for _, rt := range topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		for _, index := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = index
			p, perr := n.leaderPartition(img, rt.Topic, index)
			if !readable(rt.Topic) {
				perr = kerr.TopicAuthorizationFailed
			}
			switch {
			case perr != nil:
				// With Kafka's default message (ReplicaManager's
				// describeProducers answers with the error's).
				sp.ErrorCode, sp.ErrorMessage = perr.Code, errorMessage(perr)
			default:
				for _, ps := range p.Producers() {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID = ps.ProducerID
					ap.ProducerEpoch = int32(ps.ProducerEpoch)
					ap.LastSequence = ps.LastSequence
					ap.LastTimestamp = ps.LastTimestamp
					ap.CoordinatorEpoch = ps.CoordinatorEpoch
					ap.CurrentTxnStartOffset = ps.CurrentTxnStartOffset
					sp.ActiveProducers = append(sp.ActiveProducers, ap)
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
