package broker

// OffsetDelete (key 47), versions 0-0.
//
// Served by the group coordinator (broker/group): deletes committed offsets
// of partitions the group is not subscribed to (GROUP_SUBSCRIBED_TO_TOPIC
// otherwise).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleOffsetDelete(n *Node, ctx context.Context, _ *clientConn, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.OffsetDelete(ctx, req.(*kmsg.OffsetDeleteRequest)), nil
}
