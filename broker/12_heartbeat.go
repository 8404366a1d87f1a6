package broker

// Heartbeat (key 12), versions 0-4.
//
// Served by the group coordinator (broker/group): keeps a classic member's
// session alive and tells it of a rebalance (REBALANCE_IN_PROGRESS).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleHeartbeat(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.Heartbeat(ctx, req.(*kmsg.HeartbeatRequest)), nil
}
