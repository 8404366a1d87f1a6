package broker

// ConsumerGroupHeartbeat (key 68), versions 0-1.
//
// The consumer group protocol of KIP-848, served by the group coordinator
// (broker/group): member and group epochs, server-side assignment (uniform
// and range assignors), incremental assignment and revocation. Requests are
// checked as Kafka 4.4 checks them: from v1 (KIP-1082) the client makes the
// member id, so an empty one is INVALID_REQUEST, and a join sends an empty,
// not null, list of owned partitions; a heartbeat to a group that does not
// exist is GROUP_ID_NOT_FOUND. With group.version finalized at 0
// (UpdateFeatures) every heartbeat is answered UNSUPPORTED_VERSION, with
// no message and before any authorization, as Kafka 4.4 answers when the
// consumer group protocol is off; ApiVersions still lists the key, as
// Kafka's does, and the groups stay as they are.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleConsumerGroupHeartbeat(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ConsumerGroupHeartbeatRequest)
	if !n.consumerGroupsOn() {
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp, nil
	}
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

// consumerGroupsOn reports whether KIP-848 consumer groups are served:
// group.version is finalized at 1 or above.
func (n *Node) consumerGroupsOn() bool {
	return n.ctrl.Image().FeatureLevel(metadata.GroupVersion) >= 1
}
