package broker

// AddPartitionsToTxn (key 24), versions 0-5.
//
// Served by the transaction coordinator (broker/txn): partitions join the
// producer's ongoing transaction (written to __transaction_state first).
// v4+ batches several transactions and supports VerifyOnly (KIP-890 part
// 1), the check a partition leader makes before a transactional produce.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleAddPartitionsToTxn(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version >= 4 {
		// The batched form is the brokers' own (KIP-890).
		if !n.authorizeCluster(rc, kmsg.ACLOperationClusterAction) {
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return resp, nil
		}
		return n.txns.AddPartitionsToTxn(ctx, req), nil
	}
	// A client's: WRITE on the transactional id, then on every topic
	// but the internal ones; when a topic is refused the others are
	// answered OPERATION_NOT_ATTEMPTED, as Kafka answers.
	all := int16(0)
	if !n.authorize(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		all = kerr.TransactionalIDAuthorizationFailed.Code
	}
	denied := make([]bool, len(req.Topics))
	refused := all != 0
	for i, t := range req.Topics {
		if all == 0 && !metadata.IsInternalTopic(t.Topic) && !n.authorize(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic, t.Topic) {
			denied[i], refused = true, true
		}
	}
	if !refused {
		return n.txns.AddPartitionsToTxn(ctx, req), nil
	}
	for i, t := range req.Topics {
		st := kmsg.AddPartitionsToTxnResponseTopic{Topic: t.Topic}
		code := all
		switch {
		case code != 0:
		case denied[i]:
			code = kerr.TopicAuthorizationFailed.Code
		default:
			code = kerr.OperationNotAttempted.Code
		}
		for _, p := range t.Partitions {
			st.Partitions = append(st.Partitions, kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: p, ErrorCode: code})
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
