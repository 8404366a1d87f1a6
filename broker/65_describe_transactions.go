package broker

// DescribeTransactions (key 65), versions 0-0.
//
// Served by the transaction coordinator (broker/txn): state, producer id
// and epoch, timeout, start time and partitions of each transactional id.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeTransactions(n *Node, ctx context.Context, _ *clientConn, req kmsg.Request) (kmsg.Response, error) {
	return n.txns.DescribeTransactions(ctx, req.(*kmsg.DescribeTransactionsRequest)), nil
}
