package broker

// ShareGroupDescribe (key 77), version 1.
//
// Served by the group coordinator (broker/group): share groups (KIP-932)
// with their state (Empty, Stable), group and assignment epochs, the
// simple assignor, and members with their subscriptions and assignments.
// A group of another type answers GROUP_ID_NOT_FOUND ("is not a share
// group"), as Kafka does.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleShareGroupDescribe(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ShareGroupDescribeRequest)
	r.GroupIDs = distinct(r.GroupIDs, identity[string])
	resp := r.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	denied := func(g *string) int16 { return n.groupDenied(rc, kmsg.ACLOperationDescribe, *g) }
	if !n.shareGroupsEnabled() {
		denied = func(*string) int16 { return kerr.UnsupportedVersion.Code }
	}
	resp.Groups = splitAuthorized(r.GroupIDs, denied,
		func(kept []string) []kmsg.ShareGroupDescribeResponseGroup {
			sub := *r
			sub.GroupIDs = kept
			groups := n.groups.ShareGroupDescribe(ctx, &sub).Groups
			for i := range groups {
				if r.IncludeAuthorizedOperations && groups[i].ErrorCode == 0 {
					groups[i].AuthorizedOperations = n.authorizedOperations(rc, kmsg.ACLResourceTypeGroup, groups[i].GroupID)
				}
			}
			return groups
		},
		func(g *string, code int16) kmsg.ShareGroupDescribeResponseGroup {
			sg := kmsg.NewShareGroupDescribeResponseGroup()
			sg.GroupID, sg.ErrorCode = *g, code
			return sg
		})
	return resp, nil
}
