package broker

// Heartbeat (key 12), versions 0-4.
//
// Served by the group coordinator (broker/group): keeps a classic member's
// session alive and tells it of a rebalance (REBALANCE_IN_PROGRESS).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleHeartbeat(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.HeartbeatRequest)
	if !n.authorize(rc, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	return n.groups.Heartbeat(groupContext(ctx, rc), req), nil
}
