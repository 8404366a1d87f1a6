package broker

// SyncGroup (key 14), versions 0-5.
//
// Served by the group coordinator (broker/group): the leader's assignment
// is handed to every member of the generation.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleSyncGroup(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.SyncGroup(ctx, req.(*kmsg.SyncGroupRequest)), nil
}
