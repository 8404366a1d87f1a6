package broker

// ListGroups (key 16), versions 0-5.
//
// Served by the group coordinator (broker/group), with state filters (v4+)
// and group type filters (v5+).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleListGroups(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.ListGroups(ctx, req.(*kmsg.ListGroupsRequest)), nil
}
