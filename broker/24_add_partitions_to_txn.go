package broker

// AddPartitionsToTxn (key 24), versions 0-5.
//
// Served by the transaction coordinator (broker/txn): partitions join the
// producer's ongoing transaction (written to __transaction_state first).
// v4+ batches several transactions and supports VerifyOnly (KIP-890 part
// 1), the check a partition leader makes before a transactional produce.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleAddPartitionsToTxn(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.txns.AddPartitionsToTxn(ctx, req.(*kmsg.AddPartitionsToTxnRequest)), nil
}
