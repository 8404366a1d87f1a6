package broker

// TxnOffsetCommit (key 28), versions 0-3.
//
// Served by the group coordinator (broker/group): offsets committed inside
// a producer's transaction are written to __consumer_offsets as part of that
// transaction and become visible only when its commit marker lands (dropped
// on abort). v3 checks the member's generation (KIP-447).
//
// Not implemented: v4-5 (transaction version 2).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleTxnOffsetCommit(n *Node, ctx context.Context, _ *clientConn, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.TxnOffsetCommit(ctx, req.(*kmsg.TxnOffsetCommitRequest)), nil
}
