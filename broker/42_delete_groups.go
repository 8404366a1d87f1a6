package broker

// DeleteGroups (key 42), versions 0-2.
//
// Served by the group coordinator (broker/group): empty groups are deleted
// with their offsets (tombstones in __consumer_offsets); others get
// NON_EMPTY_GROUP.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDeleteGroups(n *Node, ctx context.Context, _ *clientConn, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.DeleteGroups(ctx, req.(*kmsg.DeleteGroupsRequest)), nil
}
