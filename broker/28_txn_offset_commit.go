package broker

// TxnOffsetCommit (key 28), versions 0-3.
//
// Served by the group coordinator (broker/group): offsets committed inside
// a producer's transaction are written to __consumer_offsets as part of that
// transaction and become visible only when its commit marker lands (dropped
// on abort). v3 checks the member's generation (KIP-447).
//
// The producer's transaction is first verified with the transaction
// coordinator, as Kafka's group coordinator verifies it (KIP-890 part 1,
// GroupCoordinatorService.commitTransactionalOffsets through
// AddPartitionsToTxnManager): unless the ongoing transaction of the
// transactional id, at the request's producer id and epoch, holds the
// group's __consumer_offsets partition (added by AddOffsetsToTxn), every
// partition is refused — INVALID_PRODUCER_ID_MAPPING (another or no
// producer id), INVALID_PRODUCER_EPOCH (a stale or newer epoch),
// INVALID_TXN_STATE (not in the transaction), CONCURRENT_TRANSACTIONS (the
// transaction is ending) — and nothing is left pending, so an invented
// producer cannot make OffsetFetch with RequireStable answer
// UNSTABLE_OFFSET_COMMIT for good.
//
// Not implemented: v4-5 (transaction version 2).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/txn"
)

func handleTxnOffsetCommit(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	if req.Group != "" { // the group coordinator answers INVALID_GROUP_ID first
		if code := n.verifyTxnOffsets(ctx, req); code != 0 {
			return txnOffsetCommitError(req, code), nil
		}
	}
	return n.groups.TxnOffsetCommit(ctx, req), nil
}

// verifyTxnOffsets asks the transaction coordinator whether the producer
// of a TxnOffsetCommit has the group's __consumer_offsets partition in its
// ongoing transaction, and returns the Kafka error code when it has not.
func (n *Node) verifyTxnOffsets(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) int16 {
	tp := txn.TopicPartition{Topic: offsetsTopic, Partition: n.offsets.partitionFor(n.ctrl.Image(), n.settings(), req.Group)}
	err := n.txns.VerifyPartition(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tp)
	switch code := txn.Code(err); code {
	case kerr.ProducerFenced.Code:
		// Kafka's AddPartitionsToTxnManager: producers expect
		// INVALID_PRODUCER_EPOCH from a failed verification.
		return kerr.InvalidProducerEpoch.Code
	case kerr.RequestTimedOut.Code:
		// As the group coordinator answers a timed-out write.
		return kerr.CoordinatorNotAvailable.Code
	default:
		return code
	}
}

// txnOffsetCommitError answers every partition of req with code.
func txnOffsetCommitError(req *kmsg.TxnOffsetCommitRequest, code int16) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
