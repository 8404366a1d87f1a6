package broker

// EndTxn (key 26), versions 0-5.
//
// Served by the transaction coordinator (broker/txn), two-phase: the
// decision (PrepareCommit/PrepareAbort) is written to __transaction_state,
// the client is answered, markers go to every partition of the transaction,
// then CompleteCommit/CompleteAbort is written.
//
// v5 is transaction version 2 (KIP-890 part 2, finalized in ApiVersions'
// features): the epoch is bumped at every commit or abort and answered
// with the producer id; an abort with no transaction open succeeds and
// bumps it too (txn.Coordinator.EndTxn).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleEndTxn(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.EndTxnRequest)
	if !n.authorize(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		resp.ProducerID, resp.ProducerEpoch = -1, -1
		return resp, nil
	}
	return n.txns.EndTxn(ctx, req), nil
}
