package broker

// DescribeTransactions (key 65), versions 0-0.
//
// Served by the transaction coordinator (broker/txn): state, producer id
// and epoch, timeout, start time and partitions of each transactional id,
// each distinct id answered once (see duplicates.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleDescribeTransactions(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeTransactionsRequest)
	r.TransactionalIDs = distinct(r.TransactionalIDs, identity[string])
	resp := r.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	resp.TransactionStates = splitAuthorized(r.TransactionalIDs,
		func(id *string) int16 {
			if n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, *id) {
				return 0
			}
			return kerr.TransactionalIDAuthorizationFailed.Code
		},
		func(kept []string) []kmsg.DescribeTransactionsResponseTransactionState {
			sub := *r
			sub.TransactionalIDs = kept
			return n.txns.DescribeTransactions(ctx, &sub).TransactionStates
		},
		func(id *string, code int16) kmsg.DescribeTransactionsResponseTransactionState {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = *id, code
			return st
		})
	return resp, nil
}
