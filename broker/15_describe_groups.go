package broker

// DescribeGroups (key 15), versions 0-6.
//
// Served by the group coordinator (broker/group): state, protocol and
// members with their metadata and assignments. Each distinct group is
// described once (see duplicates.go).
//
// Not implemented: authorized operations (no ACLs).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleDescribeGroups(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeGroupsRequest)
	r.Groups = distinct(r.Groups, identity[string])
	return n.groups.DescribeGroups(ctx, r), nil
}
