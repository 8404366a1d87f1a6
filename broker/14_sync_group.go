package broker

// SyncGroup (key 14), versions 0-5.
//
// Served by the group coordinator (broker/group): the leader's assignment
// is handed to every member of the generation.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleSyncGroup(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SyncGroupRequest)
	if !n.authorize(rc, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	return n.groups.SyncGroup(ctx, req), nil
}
