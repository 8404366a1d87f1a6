package broker

// AddOffsetsToTxn (key 25), versions 0-4.
//
// Served by the transaction coordinator (broker/txn): the group's
// __consumer_offsets partition joins the transaction, so the offsets
// committed with TxnOffsetCommit end with it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleAddOffsetsToTxn(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.txns.AddOffsetsToTxn(ctx, req.(*kmsg.AddOffsetsToTxnRequest)), nil
}
