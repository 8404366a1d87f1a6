package broker

// JoinGroup (key 11), versions 0-9.
//
// Served by the group coordinator (broker/group): generations, member ids
// with the MEMBER_ID_REQUIRED two-step join (v4+), leader election,
// protocol selection, session and rebalance timeouts, static membership
// (v5+, KIP-345). The request blocks until the rebalance completes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleJoinGroup(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.JoinGroupRequest)
	if !n.authorize(rc, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = kerr.GroupAuthorizationFailed.Code, -1
		return resp, nil
	}
	return n.groups.JoinGroup(groupContext(ctx, rc), req), nil
}
