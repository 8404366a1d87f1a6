package broker

// TxnOffsetCommit (key 28), versions 0-6.
//
// Served by the group coordinator (broker/group): offsets committed inside
// a producer's transaction are written to __consumer_offsets as part of that
// transaction and become visible only when its commit marker lands (dropped
// on abort). v3 checks the member's generation (KIP-447); v6 names topics
// by id.
//
// A partition of a topic that does not exist is answered
// UNKNOWN_TOPIC_OR_PARTITION (v6: UNKNOWN_TOPIC_ID) first, as Kafka's
// KafkaApis answers it before the group coordinator sees the request. The
// producer's transaction is then verified with the transaction
// coordinator, as Kafka's group coordinator verifies it (KIP-890 part 1,
// GroupCoordinatorService.commitTransactionalOffsets through
// AddPartitionsToTxnManager): unless the ongoing transaction of the
// transactional id, at the request's producer id and epoch, holds the
// group's __consumer_offsets partition (added by AddOffsetsToTxn), every
// partition is refused — INVALID_PRODUCER_ID_MAPPING (another or no
// producer id), INVALID_PRODUCER_EPOCH (a stale or newer epoch),
// INVALID_TXN_STATE (not in the transaction; TRANSACTION_ABORTABLE from v4,
// KIP-890's error for clients that abort on it), CONCURRENT_TRANSACTIONS
// (the transaction is ending) — and nothing is left pending, so an
// invented producer cannot make OffsetFetch with RequireStable answer
// UNSTABLE_OFFSET_COMMIT for good. A topic that does not exist is
// answered UNKNOWN_TOPIC_OR_PARTITION before any of that, as Kafka's
// KafkaApis answers it.
//
// From v5 (transaction version 2, KIP-890 part 2) the group's partition
// is added to the transaction instead, as Kafka's addPartition operation
// does: clients of transaction version 2 send no AddOffsetsToTxn.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/broker/wire"
)

func handleTxnOffsetCommit(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	// WRITE on the transactional id, READ on the group, READ on each
	// topic (TRANSACTIONAL_ID_, GROUP_, TOPIC_AUTHORIZATION_FAILED).
	all := n.groupDenied(rc, kmsg.ACLOperationRead, req.Group)
	if !n.authorize(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		all = kerr.TransactionalIDAuthorizationFailed.Code
	}
	var refused []kmsg.TxnOffsetCommitResponseTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) bool {
		code := n.topicDenied(rc, all, kmsg.ACLOperationRead, t.Topic, t.TopicID)
		if code != 0 {
			st := kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
			for _, p := range t.Partitions {
				st.Partitions = append(st.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
			}
			refused = append(refused, st)
		}
		return code != 0
	})
	if len(refused) > 0 && len(req.Topics) == 0 {
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = refused
		return resp, nil
	}
	resp, err := n.txnOffsetCommit(ctx, req)
	resp.Topics = append(resp.Topics, refused...)
	return resp, err
}

// txnOffsetCommit commits the offsets of req's topics, each authorized.
func (n *Node) txnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) (*kmsg.TxnOffsetCommitResponse, error) {
	known, unknown := splitUnknownTopics(n.ctrl.Image(), req)
	if len(known.Topics) == 0 {
		return unknown, nil
	}
	var resp *kmsg.TxnOffsetCommitResponse
	if code := int16(0); req.Group != "" { // the group coordinator answers INVALID_GROUP_ID first
		if code = n.verifyTxnOffsets(ctx, known); code != 0 {
			resp = txnOffsetCommitError(known, code)
		}
	}
	if resp == nil {
		resp = n.groups.TxnOffsetCommit(ctx, known)
	}
	resp.Topics = append(resp.Topics, unknown.Topics...)
	return resp, nil
}

// splitUnknownTopics splits a TxnOffsetCommit into the request for the
// partitions that exist and the answer for those that do not
// (UNKNOWN_TOPIC_OR_PARTITION, or UNKNOWN_TOPIC_ID for a v6 topic id),
// which Kafka's KafkaApis.handleTxnOffsetCommitRequest gives before the
// group coordinator, and so before the transaction, sees the request.
func splitUnknownTopics(img *metadata.Image, req *kmsg.TxnOffsetCommitRequest) (*kmsg.TxnOffsetCommitRequest, *kmsg.TxnOffsetCommitResponse) {
	known := *req
	known.Topics = nil
	unknown := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, rt := range req.Topics {
		var t *metadata.Topic
		var ok bool
		code := kerr.UnknownTopicOrPartition.Code
		if req.Version >= 6 {
			t, ok = img.TopicByID(rt.TopicID)
			code = kerr.UnknownTopicID.Code
		} else {
			t, ok = img.Topic(rt.Topic)
		}
		kt := rt
		kt.Partitions = nil
		ut := kmsg.NewTxnOffsetCommitResponseTopic()
		ut.Topic, ut.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			if ok && rp.Partition >= 0 && int(rp.Partition) < len(t.Partitions) {
				kt.Partitions = append(kt.Partitions, rp)
				continue
			}
			up := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			up.Partition, up.ErrorCode = rp.Partition, code
			ut.Partitions = append(ut.Partitions, up)
		}
		if len(kt.Partitions) > 0 {
			known.Topics = append(known.Topics, kt)
		}
		if len(ut.Partitions) > 0 {
			unknown.Topics = append(unknown.Topics, ut)
		}
	}
	return &known, unknown
}

// verifyTxnOffsets asks the transaction coordinator whether the producer
// of a TxnOffsetCommit has the group's __consumer_offsets partition in its
// ongoing transaction (from v5, adds it), and returns the Kafka error code
// when it has not.
func (n *Node) verifyTxnOffsets(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) int16 {
	tp := txn.TopicPartition{Topic: offsetsTopic, Partition: n.offsets.partitionFor(n.ctrl.Image(), n.settings(), req.Group)}
	var err error
	if req.Version >= 5 {
		err = n.addTxnPartition(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tp)
	} else {
		err = n.verifyTxnPartition(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tp)
	}
	return verifyCode(err, req.Version >= 4)
}

// verifyCode maps the error of a transaction verification (or implicit
// add) to what Kafka's AddPartitionsToTxnManager answers the producer:
// INVALID_PRODUCER_EPOCH for a fenced epoch, and, for the request
// versions that know it (abortable), TRANSACTION_ABORTABLE for a
// partition not in the transaction.
func verifyCode(err error, abortable bool) int16 {
	switch code := txn.Code(err); code {
	case kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code
	case kerr.InvalidTxnState.Code:
		if abortable {
			return kerr.TransactionAbortable.Code
		}
		return code
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
