package broker

// AddOffsetsToTxn (key 25), versions 0-4.
//
// Served by the transaction coordinator (broker/txn): the group's
// __consumer_offsets partition joins the transaction, so the offsets
// committed with TxnOffsetCommit end with it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleAddOffsetsToTxn(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	code := int16(0)
	if !n.authorize(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		code = kerr.TransactionalIDAuthorizationFailed.Code
	} else {
		code = n.groupDenied(rc, kmsg.ACLOperationRead, req.Group)
	}
	if code != 0 {
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	return n.txns.AddOffsetsToTxn(ctx, req), nil
}
