package broker

// DescribeTransactions (key 65), versions 0-0.
//
// Served by the transaction coordinator (broker/txn): state, producer id
// and epoch, timeout, start time and partitions of each transactional id,
// each distinct id answered once (see duplicates.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleDescribeTransactions(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeTransactionsRequest)
	r.TransactionalIDs = distinct(r.TransactionalIDs, identity[string])
	return n.txns.DescribeTransactions(ctx, r), nil
}
