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

func handleDeleteGroups(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DeleteGroupsRequest)
	r.Groups = distinct(r.Groups, identity[string])
	return n.groups.DeleteGroups(ctx, r), nil
}
