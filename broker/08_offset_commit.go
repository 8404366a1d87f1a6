package broker

// OffsetCommit (key 8), versions 2-10 (v10 names topics by id; v0-1 were
// removed in Kafka 4, KIP-896).
//
// Served by the group coordinator (broker/group): commits are written to
// __consumer_offsets before the answer; group members' commits are checked
// against generation (classic) or member epoch (KIP-848, v9+); an empty
// group accepts commits from non-members (admin tools).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleOffsetCommit(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.OffsetCommit(ctx, req.(*kmsg.OffsetCommitRequest)), nil
}
