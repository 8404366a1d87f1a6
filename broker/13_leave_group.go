package broker

// LeaveGroup (key 13), versions 0-5.
//
// Served by the group coordinator (broker/group): one member (v0-2) or a
// batch of members by member id or instance id (v3+, KIP-345).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleLeaveGroup(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.LeaveGroupRequest)
	if !n.authorize(rc, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	return n.groups.LeaveGroup(ctx, req), nil
}
