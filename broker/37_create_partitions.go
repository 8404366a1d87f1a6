package broker

// CreatePartitions (key 37), versions 0-3.
//
// Raises a topic's partition count to the requested total (never lowers
// it: INVALID_PARTITIONS). Manual assignments for the new partitions are not
// supported yet: klog places them itself. ValidateOnly checks without
// creating. A topic named more than once is answered once, with
// INVALID_REQUEST (ControllerApis.createPartitions). More than
// klog.max.partitions partition replicas on a node, and any change to an
// internal topic's count (its keys hash over it), are refused with
// POLICY_VIOLATION; Kafka allows the latter.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/errmsg"
)

func handleCreatePartitions(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	resp.Topics = changeEach(n, ctx, req.TimeoutMillis, req.ValidateOnly, req.Topics,
		func(rt *kmsg.CreatePartitionsRequestTopic) string { return rt.Topic }, errDuplicateTopic,
		func(ctx context.Context, rt *kmsg.CreatePartitionsRequestTopic, validateOnly bool) error {
			if len(rt.Assignment) > 0 {
				return errmsg.With(kerr.InvalidReplicaAssignment, "klog places new partitions itself; it takes no manual assignment.")
			}
			return n.ctrl.CreatePartitions(ctx, rt.Topic, rt.Count, validateOnly)
		},
		func(rt *kmsg.CreatePartitionsRequestTopic, err error) kmsg.CreatePartitionsResponseTopic {
			st := kmsg.NewCreatePartitionsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode, st.ErrorMessage = errorCode(err), errorMessage(err)
			return st
		})
	return resp, nil
}
