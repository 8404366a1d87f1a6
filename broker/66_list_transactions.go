package broker

// ListTransactions (key 66), versions 0-2.
//
// Served by the transaction coordinator (broker/txn), with state and
// producer id filters, a minimum duration (v1) and an id pattern (v2).

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleListTransactions(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	resp := n.txns.ListTransactions(ctx, req.(*kmsg.ListTransactionsRequest))
	// The transactional ids the principal may DESCRIBE, as Kafka lists.
	resp.TransactionStates = slices.DeleteFunc(resp.TransactionStates, func(s kmsg.ListTransactionsResponseTransactionState) bool {
		return !n.visible(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, s.TransactionalID)
	})
	return resp, nil
}
