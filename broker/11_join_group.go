package broker

// JoinGroup (key 11), versions 0-9.
//
// Served by the group coordinator (broker/group): generations, member ids
// with the MEMBER_ID_REQUIRED two-step join (v4+), leader election,
// protocol selection, session and rebalance timeouts, static membership
// (v5+, KIP-345). The request blocks until the rebalance completes.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleJoinGroup(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.JoinGroup(groupContext(ctx, rc), req.(*kmsg.JoinGroupRequest)), nil
}
