package broker

// Produce (key 0), versions 3-13; 0-2 listed, not served.
//
// Kafka 4 lists versions 0-2 in ApiVersions, for old librdkafka that
// refuses a broker without them, and closes the connection of a request
// at one of them (KIP-896); so does klog.
//
// Each partition's record batches (magic 2 only, as Kafka requires from v3)
// are validated by the log — length, magic, CRC-32C, record count, offsets,
// timestamps per message.timestamp.type, max.message.bytes — and appended
// whole or not at all. acks=0 sends no response; acks=1 answers once the
// leader appended; acks=-1 answers once the high watermark passed the
// appended records, after checking min.insync.replicas against the ISR:
// with followers it waits, up to the request's timeout, until their
// fetches move the high watermark past the partition's last appended
// offset, as Kafka's DelayedProduce does. A wait that times out answers
// REQUEST_TIMED_OUT (the append's offsets kept); one that ends with the
// ISR below min.insync.replicas answers NOT_ENOUGH_REPLICAS_AFTER_APPEND,
// and one whose replica no longer leads NOT_LEADER_OR_FOLLOWER, as
// Kafka's Partition.checkEnoughReplicasReachOffset. Version 13 names topics by id (KIP-516).
//
// From v10 a partition refused NOT_LEADER_OR_FOLLOWER carries the current
// leader and its epoch, and the response the leaders' endpoints (KIP-951,
// leader_hints.go).
//
// Each partition must carry exactly one whole batch of magic 2, as Kafka's
// ProduceRequest.validateRecords requires (INVALID_RECORD, checked before
// the partition's leader); bytes after it that are no whole batch are
// refused by the log (CORRUPT_MESSAGE), where Kafka drops them.
//
// Idempotent producers are deduplicated by the log (the last five batches
// of each producer id; a retried batch is answered with its original
// offsets), sequence gaps get OUT_OF_ORDER_SEQUENCE_NUMBER and stale epochs
// INVALID_PRODUCER_EPOCH. A transactional produce is first verified with
// the transaction coordinator (KIP-890 part 1): a partition not in the
// producer's ongoing transaction is refused (INVALID_TXN_STATE, from v11
// TRANSACTION_ABORTABLE), so a late write of an ended transaction cannot
// hang the LSO. From v12 (transaction version 2, KIP-890 part 2) the
// partition is added to the transaction instead, starting one if none is
// open: clients of transaction version 2 send no AddPartitionsToTxn. A
// request that carries a transactional batch but no transactional id is
// refused whole with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka's
// KafkaApis.handleProduceRequest refuses it: no coordinator knows that
// transaction, so nothing would ever end it and its records would pin the
// LSO. Clients cannot write to internal topics (INVALID_TOPIC_EXCEPTION).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
)

func handleProduce(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (wire.Reply, error) {
	req := kreq.(*kmsg.ProduceRequest)
	if req.Version < 3 {
		return wire.Reply{}, fmt.Errorf("%w: Produce v%d is listed, not served", errUnsupported, req.Version)
	}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	pending, synced := n.appendProduce(ctx, rc, req, resp)
	// The client's producer_byte_rate (quota.go).
	throttle := n.recordQuota(auth.ProduceQuota, rc, float64(produceBytes(req)))
	resp.ThrottleMillis = throttleMillis(throttle)
	if req.Acks == 0 {
		syncAppends(resp, synced)
		return wire.Reply{Throttle: throttle}, nil
	}
	reply := n.produceReply(ctx, rc.Listener, req, resp, pending, synced)
	reply.Throttle = throttle
	return reply, nil
}

// appendProduce appends each partition's batches of req and answers each
// partition in resp, refusing the request's partitions whole when it
// carries transactional batches without a transactional id it may WRITE,
// or an acks Kafka does not know, and each topic it may not WRITE
// (TOPIC_AUTHORIZATION_FAILED, whether or not it exists). It returns the acks=-1 appends that wait for the
// high watermark (pending) and the appends of a durable node, to be
// fsynced first (synced).
func (n *Node) appendProduce(ctx context.Context, rc *wire.RequestContext, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse) (pending, synced []ackWait) {
	img := n.ctrl.Image()
	acks := req.Acks
	validAcks := acks == 0 || acks == 1 || acks == -1
	// Each partition's batches are parsed here, once: the checks below
	// and the log's append read the views.
	views, transactional := produceBatches(req)
	var requestErr *kerr.Error
	if transactional && (req.TransactionID == nil || !n.authorize(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionID)) {
		requestErr = kerr.TransactionalIDAuthorizationFailed
	}

	resp.Topics = make([]kmsg.ProduceResponseTopic, 0, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		topic, topicErr := produceTopic(img, req.Version, rt)
		if topicErr != kerr.UnknownTopicID && !n.authorize(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic, topicName(topic, rt.Topic)) {
			topicErr = kerr.TopicAuthorizationFailed
		}
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, 0, len(rt.Partitions))
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			batches := &views[0]
			views = views[1:]
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset = -1
			sp.LogAppendTime = -1
			sp.LogStartOffset = -1
			switch {
			case requestErr != nil:
				sp.ErrorCode = requestErr.Code
			case !validAcks:
				sp.ErrorCode = kerr.InvalidRequiredAcks.Code
			case topicErr != nil:
				sp.ErrorCode = topicErr.Code
			default:
				if w, ok := n.produceOne(ctx, img, req, topic, rp, batches, &sp); ok {
					n.producerPrincipals.note(batches.ProducerID(), rc.Principal)
					w.topic, w.partition = len(resp.Topics), len(st.Partitions)
					if n.settings().ProduceDurable {
						synced = append(synced, w)
					}
					if acks == -1 {
						pending = append(pending, w)
					}
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return pending, synced
}

// produceReply answers a produce of acks 1 or -1 whose appends are done:
// at once when none waits for followers or the disk, else later, once
// the synced appends are fsynced and the pending ones replicated or
// timed out.
func (n *Node) produceReply(ctx context.Context, listener string, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse, pending, synced []ackWait) wire.Reply {
	// Most appends are done at once (one replica, or followers quick):
	// answer those now.
	pending = settleAcks(resp, pending)
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	finish := func(ctx context.Context) kmsg.Response {
		syncAppends(resp, synced)
		// An append whose sync failed is answered with that error.
		pending = slices.DeleteFunc(pending, func(w ackWait) bool {
			return resp.Topics[w.topic].Partitions[w.partition].ErrorCode != 0
		})
		awaitAcks(ctx, resp, pending, timeout)
		n.addProduceLeaderHints(listener, req, resp)
		return resp
	}
	if len(pending) == 0 && len(synced) == 0 {
		return wire.Reply{Response: finish(ctx)}
	}
	// The appends are done in the connection's order; the wait for the
	// followers and the disk overlaps the connection's next produces.
	// finish holds no part of the request's frame, which the connection
	// reuses: the response's names are copies, and the leader hints read
	// only req's version.
	return wire.Reply{Later: finish}
}

// maxSyncers bounds the partitions of one produce fsynced at once.
const maxSyncers = 8

// syncAppends makes the appends of a durable node (klog.produce.durable)
// durable, several partitions at once, and answers a partition whose sync
// failed with its error. Each partition's fsync covers every write to it
// so far, other produces' included (partition.SyncTo).
func syncAppends(resp *kmsg.ProduceResponse, synced []ackWait) {
	if len(synced) == 0 {
		return
	}
	errs := make([]error, len(synced))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(len(synced), maxSyncers) {
		wg.Go(func() {
			for i := range next {
				errs[i] = synced[i].p.SyncTo(synced[i].required)
			}
		})
	}
	for i := range synced {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			w := synced[i]
			sp := &resp.Topics[w.topic].Partitions[w.partition]
			sp.ErrorCode, sp.BaseOffset = errorCode(err), -1
		}
	}
}

// ackWait is an acks=-1 append waiting for the high watermark to pass
// required, its last offset plus one; topic and partition place its
// answer in the response.
type ackWait struct {
	p                *partition.Partition
	required         int64
	minISR           int
	topic, partition int
}

// awaitAcks waits until every pending append is replicated to the ISR or
// timeout passes, and puts each one's outcome in resp, as Kafka's
// DelayedProduce and Partition.checkEnoughReplicasReachOffset decide it.
// With one replica the high watermark is already past every append and it
// returns at once.
func awaitAcks(ctx context.Context, resp *kmsg.ProduceResponse, pending []ackWait, timeout time.Duration) {
	if pending = settleAcks(resp, pending); len(pending) == 0 {
		return
	}
	wake := make(chan struct{}, 1)
	var timer *time.Timer
	for {
		// Wait registers only while the high watermark is below required:
		// an advance between the check and the wait is never missed.
		rest := pending[:0]
		for _, w := range pending {
			code, done := w.check()
			if !done && w.p.Wait(wake, w.required-1, partition.ReadUncommitted) {
				rest = append(rest, w)
				continue
			}
			if !done {
				// Wait refused: the watermark moved, or the partition
				// closed (no longer hosted here).
				if code, done = w.check(); !done {
					code = kerr.NotLeaderForPartition.Code
				}
			}
			resp.Topics[w.topic].Partitions[w.partition].ErrorCode = code
		}
		pending = rest
		if len(pending) == 0 {
			return
		}
		if timer == nil {
			timer = time.NewTimer(timeout)
			defer timer.Stop()
		}
		if expired := waitWake(ctx, wake, timer, pending, func(w ackWait) *partition.Partition { return w.p }); expired {
			for _, w := range pending {
				code, done := w.check()
				if !done {
					code = kerr.RequestTimedOut.Code
				}
				resp.Topics[w.topic].Partitions[w.partition].ErrorCode = code
			}
			return
		}
	}
}

// settleAcks answers the pending appends whose wait is over, and returns
// the others, in pending's array.
func settleAcks(resp *kmsg.ProduceResponse, pending []ackWait) []ackWait {
	rest := pending[:0]
	for _, w := range pending {
		if code, done := w.check(); done {
			resp.Topics[w.topic].Partitions[w.partition].ErrorCode = code
		} else {
			rest = append(rest, w)
		}
	}
	return rest
}

// waitWake waits for a signal on wake, which pending's partitions were
// registered to send, until timer fires or ctx ends; then it unregisters
// wake from each and drains it, so it is ready for the next round. It
// reports whether the wait expired.
func waitWake[W any](ctx context.Context, wake chan struct{}, timer *time.Timer, pending []W, part func(W) *partition.Partition) bool {
	expired := false
	select {
	case <-wake:
	case <-timer.C:
		expired = true
	case <-ctx.Done():
		expired = true
	}
	for _, w := range pending {
		part(w).Unwait(wake)
	}
	select {
	case <-wake:
	default:
	}
	return expired
}

// check reports whether the wait is over and its error code: the high
// watermark reached required (NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND
// when the ISR shrank below min.insync.replicas meanwhile) or the replica
// no longer leads (NOT_LEADER_OR_FOLLOWER).
func (w ackWait) check() (int16, bool) {
	switch {
	case !w.p.IsLeader():
		return kerr.NotLeaderForPartition.Code, true
	case w.p.HighWatermark() < w.required:
		return 0, false
	case len(w.p.LeaderState().ISR) < w.minISR:
		return kerr.NotEnoughReplicasAfterAppend.Code, true
	}
	return 0, true
}

// produceBatches parses the batches of each partition of a produce
// request, in the request's order, and reports whether any batch that
// parses has the transactional bit; what does not parse is the log's to
// refuse.
func produceBatches(req *kmsg.ProduceRequest) (views []record.Batches, transactional bool) {
	count := 0
	for i := range req.Topics {
		count += len(req.Topics[i].Partitions)
	}
	views = make([]record.Batches, count)
	k := 0
	for i := range req.Topics {
		for j := range req.Topics[i].Partitions {
			views[k].Parse(req.Topics[i].Partitions[j].Records)
			transactional = transactional || views[k].Transactional()
			k++
		}
	}
	return views, transactional
}

// produceTopic resolves a produce request's topic by name, or by id from
// version 13.
func produceTopic(img *metadata.Image, version int16, rt *kmsg.ProduceRequestTopic) (*metadata.Topic, *kerr.Error) {
	if version >= 13 {
		t, ok := img.TopicByID(rt.TopicID)
		if !ok {
			return nil, kerr.UnknownTopicID
		}
		return t, nil
	}
	t, ok := img.Topic(rt.Topic)
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	return t, nil
}

// topicName is the name of t, a topic a request named, or name when it
// does not exist.
func topicName(t *metadata.Topic, name string) string {
	if t != nil {
		return t.Name
	}
	return name
}

// produceOne appends one partition's batches, rp's records as parsed in
// batches; t is the request's topic as resolved in img. An acks=-1 append
// is returned to wait for (ok).
func (n *Node) produceOne(ctx context.Context, img *metadata.Image, req *kmsg.ProduceRequest, t *metadata.Topic, rp *kmsg.ProduceRequestTopicPartition, batches *record.Batches, sp *kmsg.ProduceResponseTopicPartition) (w ackWait, ok bool) {
	txnID, acks := req.TransactionID, req.Acks
	p, perr := n.leaderPartition(img, t.Name, rp.Partition)
	if perr == kerr.UnknownTopicOrPartition {
		sp.ErrorCode = perr.Code
		return w, false
	}
	if code := produceRecordsError(req.Version, batches); code != 0 {
		sp.ErrorCode = code
		return w, false
	}
	if t.Internal {
		// Internal topics are refused once the partition is known to
		// exist, whoever leads it.
		perr = kerr.InvalidTopicException
	}
	if perr != nil {
		sp.ErrorCode = perr.Code
		return w, false
	}
	// min.insync.replicas is checked against the partition's ISR before
	// the transaction check, and again as the batch is appended: the ISR
	// may shrink in between. As in Kafka 4 (Partition.effectiveMinIsr), it
	// counts for no more than the partition's replicas: a topic with one
	// replica and min.insync.replicas=2 takes acks=all.
	opts := partition.AppendOptions{DeferSync: n.settings().ProduceDurable}
	if acks == -1 {
		state := p.LeaderState()
		minISR := min(int(n.topicConfig(t).MinInsyncReplicas), len(state.Replicas))
		if len(state.ISR) < minISR {
			appendError(p, partition.ErrNotEnoughReplicas, sp) // with the log start offset, as Kafka answers
			return w, false
		}
		opts.MinInSyncReplicas = int64(minISR)
	}
	if txnID != nil {
		if code := n.verifyTransactional(ctx, p, req.Version, *txnID, t.Name, rp.Partition, batches); code != 0 {
			sp.ErrorCode = code
			return w, false
		}
	}
	res, err := p.AppendWith(batches, opts)
	if err != nil {
		appendError(p, err, sp)
		return w, false
	}
	if !res.Duplicate {
		n.stats.produced(t.Name, len(rp.Records), res.Records)
	}
	sp.BaseOffset = res.FirstOffset
	sp.LogAppendTime = res.LogAppendTime
	if res.Duplicate {
		// Kafka's UnifiedLog answers a duplicate with the original
		// batch's timestamp as its append time, whatever the topic's
		// timestamp type.
		sp.LogAppendTime = res.MaxTimestamp
	}
	sp.LogStartOffset = p.LogStartOffset()
	w = ackWait{p: p, required: res.LastOffset + 1, minISR: int(opts.MinInSyncReplicas)}
	return w, acks == -1 || opts.DeferSync
}

// appendError puts an append the log refused in sp as Kafka's
// ReplicaManager.appendToLocalLog does. A batch refused for some of its
// records (Kafka's RecordValidationException) lists them, with Kafka's
// message; INVALID_RECORD keeps klog's message, as Kafka's has one; every
// other error goes without one. The partition's log start offset is sent,
// except for the errors Kafka answers without it.
func appendError(p *partition.Partition, err error, sp *kmsg.ProduceResponseTopicPartition) {
	sp.ErrorCode = errorCode(err)
	var refused *log.RecordErrors
	switch {
	case errors.As(err, &refused):
		msg := recordErrorsMessage(refused)
		sp.ErrorMessage = &msg
		for _, r := range refused.Records {
			er := kmsg.NewProduceResponseTopicPartitionErrorRecord()
			er.RelativeOffset = r.Index
			m := r.Message
			er.ErrorMessage = &m
			sp.ErrorRecords = append(sp.ErrorRecords, er)
		}
	case sp.ErrorCode == kerr.InvalidRecord.Code:
		sp.ErrorMessage = errorMessage(err)
	}
	switch sp.ErrorCode {
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.CorruptMessage.Code,
		kerr.KafkaStorageError.Code, kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code:
	default:
		sp.LogStartOffset = p.LogStartOffset()
	}
}

// recordErrorsMessage is the message of Kafka's LogValidator for a batch
// refused for some of its records: one sentence for timestamps, else the
// count and the first three errors as Java prints its RecordError list.
func recordErrorsMessage(refused *log.RecordErrors) string {
	if errors.Is(refused.Err, log.ErrInvalidTimestamp) {
		return "One or more records have been rejected due to invalid timestamp"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [", len(refused.Records))
	for i, r := range refused.Records[:min(3, len(refused.Records))] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "RecordError(batchIndex=%d, message='%s')", r.Index, r.Message)
	}
	b.WriteString("]")
	return b.String()
}

// produceRecordsError checks a partition's records as Kafka's
// ProduceRequest.validateRecords does in KafkaApis, before any append, and
// answers as it does (no message, no log start offset): the records must
// hold a whole first batch (INVALID_RECORD: "at least one record batch"),
// of magic 2, not zstd-compressed before v7 (UNSUPPORTED_COMPRESSION_TYPE),
// and no second whole batch. Batches are framed as Kafka's
// ByteBufferLogInputStream frames them (record.Batches.FirstFrame): a
// batch that is not all there is not one; a length below 14 is
// CORRUPT_MESSAGE. What follows the first batch and is no whole batch is
// the log's to refuse.
func produceRecordsError(version int16, batches *record.Batches) int16 {
	codec, err := batches.FirstFrame()
	switch {
	case err != nil:
		return errorCode(err)
	case version < 7 && codec == record.Zstd:
		return kerr.UnsupportedCompressionType.Code
	}
	return errorCode(batches.NextFrame())
}

// verifyTransactional asks the transaction coordinator whether the
// producer of a transactional produce has this partition in its ongoing
// transaction, and returns the Kafka error code when it has not. From
// version 12 (transaction version 2, KIP-890 part 2) the partition is
// added to the transaction instead, as Kafka's AddPartitionsToTxnManager
// does for the addPartition operation. A fenced epoch is answered
// INVALID_PRODUCER_EPOCH at every version, as AddPartitionsToTxnManager
// answers it: producers (librdkafka's at v10 among them) take that as
// fatal, where PRODUCER_FENCED on a produce would be abortable to them.
func (n *Node) verifyTransactional(ctx context.Context, p *partition.Partition, version int16, txnID, topic string, index int32, batches *record.Batches) int16 {
	b, err := batches.First()
	if err != nil {
		return errorCode(err)
	}
	if !b.Attributes().Transactional() {
		return kerr.InvalidRecord.Code // a transactional produce of non-transactional data
	}
	// A later batch of the producer must not overtake this one while it
	// is verified (and perhaps refused and retried).
	p.StartVerification(b.ProducerID(), b.ProducerEpoch(), b.BaseSequence())
	tp := txn.TopicPartition{Topic: topic, Partition: index}
	if version < 12 {
		err = n.verifyTxnPartition(ctx, txnID, b.ProducerID(), b.ProducerEpoch(), tp)
	} else {
		err = n.addTxnPartition(ctx, txnID, b.ProducerID(), b.ProducerEpoch(), tp)
	}
	switch code := txn.Code(err); {
	case code == kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code
	case code == kerr.InvalidTxnState.Code && version == 11:
		return kerr.TransactionAbortable.Code // KIP-890's error for v11 producers
	default:
		return code
	}
}
