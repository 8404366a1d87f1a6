package broker

// DeleteGroups (key 42), versions 0-3 (v3 adds an error message, which
// klog leaves null, as Kafka 4.4 does for GROUP_ID_NOT_FOUND and
// NON_EMPTY_GROUP).
//
// Served by the group coordinator (broker/group): empty groups are deleted
// with their offsets (tombstones in __consumer_offsets); others get
// NON_EMPTY_GROUP. Each distinct group is deleted and answered once (see
// duplicates.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleDeleteGroups(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DeleteGroupsRequest)
	r.Groups = distinct(r.Groups, identity[string])
	resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
	resp.Groups = splitAuthorized(r.Groups,
		func(g *string) int16 { return n.groupDenied(rc, kmsg.ACLOperationDelete, *g) },
		func(kept []string) []kmsg.DeleteGroupsResponseGroup {
			sub := *r
			sub.Groups = kept
			return n.groups.DeleteGroups(ctx, &sub).Groups
		},
		func(g *string, code int16) kmsg.DeleteGroupsResponseGroup {
			return kmsg.DeleteGroupsResponseGroup{Group: *g, ErrorCode: code}
		})
	return resp, nil
}
