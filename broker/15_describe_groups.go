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

func handleDescribeGroups(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeGroupsRequest)
	r.Groups = distinct(r.Groups, identity[string])
	resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
	resp.Groups = splitAuthorized(r.Groups,
		func(g *string) int16 { return n.groupDenied(rc, kmsg.ACLOperationDescribe, *g) },
		func(kept []string) []kmsg.DescribeGroupsResponseGroup {
			sub := *r
			sub.Groups = kept
			return n.groups.DescribeGroups(ctx, &sub).Groups
		},
		func(g *string, code int16) kmsg.DescribeGroupsResponseGroup {
			sg := kmsg.NewDescribeGroupsResponseGroup()
			sg.Group, sg.ErrorCode = *g, code
			return sg
		})
	if r.IncludeAuthorizedOperations {
		for i := range resp.Groups {
			if resp.Groups[i].ErrorCode == 0 {
				resp.Groups[i].AuthorizedOperations = n.authorizedOperations(rc, kmsg.ACLResourceTypeGroup, resp.Groups[i].Group)
			}
		}
	}
	return resp, nil
}
