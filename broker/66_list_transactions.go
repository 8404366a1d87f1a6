package broker

// ListTransactions (key 66), versions 0-2.
//
// Served by the transaction coordinator (broker/txn), with state and
// producer id filters, a minimum duration (v1) and an id pattern (v2).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleListTransactions(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.txns.ListTransactions(ctx, req.(*kmsg.ListTransactionsRequest)), nil
}
