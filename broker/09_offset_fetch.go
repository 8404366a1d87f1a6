package broker

// OffsetFetch (key 9), versions 0-10.
//
// Served by the group coordinator (broker/group): one group (v0-7) or many
// (v8+), all partitions when none are named (v2+), RequireStable (v7+).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleOffsetFetch(n *Node, ctx context.Context, _ *clientConn, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.OffsetFetch(ctx, req.(*kmsg.OffsetFetchRequest)), nil
}
