package broker

// Produce (key 0), versions 3-13.
//
// Each partition's record batches (magic 2 only, as Kafka requires from v3)
// are validated by the log — length, magic, CRC-32C, record count, offsets,
// timestamps per message.timestamp.type, max.message.bytes — and appended
// whole or not at all. acks=0 sends no response; acks=1 answers once the
// leader appended; acks=-1 answers once the high watermark passed the
// appended records, after checking min.insync.replicas against the ISR.
// Version 13 names topics by id (KIP-516).
//
// klog accepts several batches for one partition in one request; Kafka
// refuses that from v3 with INVALID_RECORD, but no client sends it.
//
// Idempotent producers are deduplicated by the log (the last five batches
// of each producer id; a retried batch is answered with its original
// offsets), sequence gaps get OUT_OF_ORDER_SEQUENCE_NUMBER and stale epochs
// INVALID_PRODUCER_EPOCH. A transactional produce is first verified with
// the transaction coordinator (KIP-890 part 1): a partition not in the
// producer's ongoing transaction is refused, so a late write of an ended
// transaction cannot hang the LSO. A request that carries a
// transactional batch but no transactional id is refused whole with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka's
// KafkaApis.handleProduceRequest refuses it: no coordinator knows that
// transaction, so nothing would ever end it and its records would pin the
// LSO. Clients cannot write to internal topics (INVALID_TOPIC_EXCEPTION).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/store/log/record"
)

func handleProduce(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	img := n.ctrl.Image()
	acks := req.Acks
	validAcks := acks == 0 || acks == 1 || acks == -1
	var requestErr *kerr.Error
	if req.TransactionID == nil && hasTransactionalBatch(req) {
		requestErr = kerr.TransactionalIDAuthorizationFailed
	}

	resp.Topics = make([]kmsg.ProduceResponseTopic, 0, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		topic, topicErr := produceTopic(img, req.Version, rt)
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, 0, len(rt.Partitions))
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
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
				n.produceOne(ctx, img, req.TransactionID, topic, acks, rp, &sp)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if acks == 0 {
		return nil, nil
	}
	return resp, nil
}

// hasTransactionalBatch reports whether any partition of a produce request
// carries a batch with the transactional bit. Batches are read as far as
// their headers parse; what does not parse is the log's to refuse.
func hasTransactionalBatch(req *kmsg.ProduceRequest) bool {
	for i := range req.Topics {
		for j := range req.Topics[i].Partitions {
			for rest := req.Topics[i].Partitions[j].Records; len(rest) > 0; {
				b, err := record.Parse(rest)
				if err != nil {
					break
				}
				if b.Attributes().Transactional() {
					return true
				}
				rest = rest[len(b):]
			}
		}
	}
	return false
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

// produceOne appends one partition's batches; t is the request's topic as
// resolved in img.
func (n *Node) produceOne(ctx context.Context, img *metadata.Image, txnID *string, t *metadata.Topic, acks int16, rp *kmsg.ProduceRequestTopicPartition, sp *kmsg.ProduceResponseTopicPartition) {
	p, perr := n.leaderPartition(img, t.Name, rp.Partition)
	if t.Internal && perr != kerr.UnknownTopicOrPartition {
		// Internal topics are refused once the partition is known to
		// exist, whoever leads it.
		perr = kerr.InvalidTopicException
	}
	if perr != nil {
		sp.ErrorCode = perr.Code
		return
	}
	// min.insync.replicas is checked against the partition's ISR before
	// the transaction check, and again as the batch is appended: the ISR
	// may shrink in between.
	var opts partition.AppendOptions
	if acks == -1 {
		minISR := n.topicConfig(t).MinInsyncReplicas
		if len(p.LeaderState().ISR) < int(minISR) {
			sp.ErrorCode = kerr.NotEnoughReplicas.Code
			return
		}
		opts.MinInSyncReplicas = int64(minISR)
	}
	if txnID != nil {
		if code := n.verifyTransactional(ctx, *txnID, t.Name, rp); code != 0 {
			sp.ErrorCode = code
			return
		}
	}
	res, err := p.AppendWith(rp.Records, opts)
	if err != nil {
		sp.ErrorCode = errorCode(err)
		sp.ErrorMessage = errorMessage(err)
		return
	}
	sp.BaseOffset = res.FirstOffset
	sp.LogAppendTime = res.LogAppendTime
	sp.LogStartOffset = p.LogStartOffset()
}

// verifyTransactional asks the transaction coordinator whether the
// producer of a transactional produce has this partition in its ongoing
// transaction, and returns the Kafka error code when it has not.
func (n *Node) verifyTransactional(ctx context.Context, txnID, topic string, rp *kmsg.ProduceRequestTopicPartition) int16 {
	b, err := record.Parse(rp.Records)
	if err != nil {
		return errorCode(err)
	}
	if !b.Attributes().Transactional() {
		return kerr.InvalidRecord.Code // a transactional produce of non-transactional data
	}
	err = n.txns.VerifyPartition(ctx, txnID, b.ProducerID(), b.ProducerEpoch(), txn.TopicPartition{Topic: topic, Partition: rp.Partition})
	if err != nil {
		return txn.Code(err)
	}
	return 0
}
