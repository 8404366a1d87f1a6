package broker

// ConsumerGroupHeartbeat (key 68), versions 0-1.
//
// The consumer group protocol of KIP-848, served by the group coordinator
// (broker/group): member and group epochs, server-side assignment (uniform
// and range assignors), incremental assignment and revocation. Requests are
// checked as Kafka 4.4 checks them: from v1 (KIP-1082) the client makes the
// member id, so an empty one is INVALID_REQUEST, and a join sends an empty,
// not null, list of owned partitions; a heartbeat to a group that does not
// exist is GROUP_ID_NOT_FOUND.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleConsumerGroupHeartbeat(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ConsumerGroupHeartbeatRequest)
	code := n.groupDenied(rc, kmsg.ACLOperationRead, r.Group)
	for _, t := range r.SubscribedTopicNames {
		if code == 0 && !n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t) {
			code = kerr.TopicAuthorizationFailed.Code
		}
	}
	if code != 0 {
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = code, errorMessage(kerr.ErrorForCode(code))
		return resp, nil
	}
	return n.groups.ConsumerGroupHeartbeat(groupContext(ctx, rc), r), nil
}
