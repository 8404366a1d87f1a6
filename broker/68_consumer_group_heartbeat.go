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
	if code := n.heartbeatDenied(rc, r.Group, r.SubscribedTopicNames); code != 0 {
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = code, errorMessage(kerr.ErrorForCode(code))
		return resp, nil
	}
	return n.groups.ConsumerGroupHeartbeat(groupContext(ctx, rc), r), nil
}

// heartbeatDenied is the refusal of a consumer or share group heartbeat:
// GROUP_AUTHORIZATION_FAILED without READ on the group,
// TOPIC_AUTHORIZATION_FAILED without DESCRIBE on a topic it subscribes to.
func (n *Node) heartbeatDenied(rc *wire.RequestContext, group string, topics []string) int16 {
	if code := n.groupDenied(rc, kmsg.ACLOperationRead, group); code != 0 {
		return code
	}
	for _, t := range topics {
		if !n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t) {
			return kerr.TopicAuthorizationFailed.Code
		}
	}
	return 0
}
