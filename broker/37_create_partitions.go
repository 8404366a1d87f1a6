package broker

// CreatePartitions (key 37), versions 0-3.
//
// Raises a topic's partition count to the requested total (never lowers
// it: INVALID_PARTITIONS). Without an assignment klog places the new
// partitions itself; with one, each new partition gets the replicas listed,
// the first its preferred leader, checked as Kafka checks them
// (INVALID_REPLICA_ASSIGNMENT for a count that is not the number of new
// partitions, an empty list, an unregistered broker, a broker twice, a
// replica count other than the topic's, or only fenced brokers).
// ValidateOnly checks without creating. A topic named more than once is
// answered once, with INVALID_REQUEST (ControllerApis.createPartitions).
// More than klog.max.partitions partition replicas on a node, and any
// change to an internal topic's count (its keys hash over it), are refused
// with POLICY_VIOLATION; Kafka allows the latter.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleCreatePartitions(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	resp.Topics = changeEach(n, ctx, req.TimeoutMillis, req.ValidateOnly, req.Topics,
		func(rt *kmsg.CreatePartitionsRequestTopic) string { return rt.Topic }, errDuplicateTopic,
		func(ctx context.Context, rt *kmsg.CreatePartitionsRequestTopic, validateOnly bool) error {
			if !n.authorize(rc, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeTopic, rt.Topic) {
				return kerr.TopicAuthorizationFailed
			}
			var assignment [][]int32
			if rt.Assignment != nil {
				assignment = make([][]int32, 0, len(rt.Assignment))
				for _, a := range rt.Assignment {
					assignment = append(assignment, a.Replicas)
				}
			}
			return n.ctrl.CreatePartitions(ctx, rt.Topic, rt.Count, assignment, validateOnly)
		},
		func(rt *kmsg.CreatePartitionsRequestTopic, err error) kmsg.CreatePartitionsResponseTopic {
			st := kmsg.NewCreatePartitionsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode, st.ErrorMessage = errorCode(err), errorMessage(err)
			return st
		})
	return resp, nil
}
