package broker

// EndTxn (key 26), versions 0-4.
//
// Served by the transaction coordinator (broker/txn), two-phase: the
// decision (PrepareCommit/PrepareAbort) is written to __transaction_state,
// the client is answered, markers go to every partition of the transaction,
// then CompleteCommit/CompleteAbort is written.
//
// Not implemented: v5 (transaction version 2, KIP-890 part 2, an epoch bump
// per transaction); clients negotiate v4 and the classic protocol.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleEndTxn(n *Node, ctx context.Context, _ *clientConn, req kmsg.Request) (kmsg.Response, error) {
	return n.txns.EndTxn(ctx, req.(*kmsg.EndTxnRequest)), nil
}
