package broker

// ListGroups (key 16), versions 0-5.
//
// Served by the group coordinator (broker/group), with state filters (v4+)
// and group type filters (v5+).

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
)

func handleListGroups(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	resp := n.groups.ListGroups(ctx, req.(*kmsg.ListGroupsRequest))
	// DESCRIBE on the cluster lists every group, else those the
	// principal may DESCRIBE, as Kafka lists them.
	if !n.visible(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeCluster, auth.ClusterName) {
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
			return !n.visible(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, g.Group)
		})
	}
	return resp, nil
}
