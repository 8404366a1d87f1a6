package broker

// ConsumerGroupDescribe (key 69), versions 0-1.
//
// Served by the group coordinator (broker/group): KIP-848 groups with their
// epochs, assignor, members, and current and target assignments. With
// group.version finalized at 0 (UpdateFeatures) every group named is
// answered UNSUPPORTED_VERSION, before any authorization, as Kafka 4.4
// answers when the consumer group protocol is off.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleConsumerGroupDescribe(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ConsumerGroupDescribeRequest)
	resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	if !n.consumerGroupsOn() {
		for _, g := range r.Groups {
			sg := kmsg.NewConsumerGroupDescribeResponseGroup()
			sg.Group, sg.ErrorCode = g, kerr.UnsupportedVersion.Code
			resp.Groups = append(resp.Groups, sg)
		}
		return resp, nil
	}
	r.Groups = distinct(r.Groups, identity[string])
	resp.Groups = splitAuthorized(r.Groups,
		func(g *string) int16 { return n.groupDenied(rc, kmsg.ACLOperationDescribe, *g) },
		func(kept []string) []kmsg.ConsumerGroupDescribeResponseGroup {
			sub := *r
			sub.Groups = kept
			return n.groups.ConsumerGroupDescribe(ctx, &sub).Groups
		},
		func(g *string, code int16) kmsg.ConsumerGroupDescribeResponseGroup {
			sg := kmsg.NewConsumerGroupDescribeResponseGroup()
			sg.Group, sg.ErrorCode = *g, code
			return sg
		})
	return resp, nil
}
