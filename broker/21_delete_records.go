package broker

// DeleteRecords (key 21), versions 0-2.
//
// Each partition's leader raises its log start offset to the offset asked
// (-1: the high watermark) and deletes the segments wholly below it, as
// Kafka's Partition.deleteRecordsOnLeader; consumers fetching below it get
// OFFSET_OUT_OF_RANGE and ListOffsets earliest returns it. Followers learn
// the new log start from their Fetch responses and report theirs in their
// Fetch requests (replica/fetcher.go); the answer waits, up to the
// request's TimeoutMs, until the low watermark — the lowest log start
// among the leader and its followers on unfenced brokers, Kafka's
// Partition.lowWatermarkIfLeader — reaches the offset, and returns it, as
// Kafka's DelayedDeleteRecords. A wait that times out answers
// REQUEST_TIMED_OUT with the low watermark of the first answer; a replica
// that stops leading meanwhile answers NOT_LEADER_OR_FOLLOWER.
//
// Per partition, in Kafka's order: UNKNOWN_TOPIC_OR_PARTITION for a
// partition the metadata does not know; INVALID_TOPIC_EXCEPTION for an
// internal topic (__consumer_offsets, __transaction_state);
// NOT_LEADER_OR_FOLLOWER on a node that does not lead it;
// POLICY_VIOLATION when cleanup.policy does not include delete;
// OFFSET_OUT_OF_RANGE for an offset below 0 (other than -1) or above the
// high watermark. An error answers low watermark -1.
//
// A partition named more than once is answered once, with the last
// offset named, as Kafka's KafkaApis.handleDeleteRecordsRequest keeps the
// partitions in a map; a topic named without partitions is not
// answered. The principal needs DELETE on the topic
// (TOPIC_AUTHORIZATION_FAILED).

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/wire"
)

func handleDeleteRecords(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	img := n.ctrl.Image()
	last := make(map[topicPartition]int64) // the offset each partition is answered for
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			last[topicPartition{rt.Topic, rp.Partition}] = rp.Offset
		}
	}
	alive := n.brokerAlive
	topics := make(map[string]int, len(req.Topics)) // index in resp.Topics
	var pending []lowWatermarkWait
	deletable := n.topicsAllowed(rc, kmsg.ACLOperationDelete)
	for _, rt := range req.Topics {
		if len(rt.Partitions) == 0 {
			continue // Kafka answers partitions, and a topic only through them
		}
		i, ok := topics[rt.Topic]
		if !ok {
			i = len(resp.Topics)
			topics[rt.Topic] = i
			st := kmsg.NewDeleteRecordsResponseTopic()
			st.Topic = rt.Topic
			resp.Topics = append(resp.Topics, st)
		}
		for _, rp := range rt.Partitions {
			tp := topicPartition{rt.Topic, rp.Partition}
			offset, ok := last[tp]
			if !ok {
				continue // answered at its first appearance
			}
			delete(last, tp)
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			if !deletable(rt.Topic) {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
				continue
			}
			p, required, lw, err := n.deletePartitionRecords(img, tp, offset, alive)
			switch {
			case err != nil:
				sp.ErrorCode = errorCode(err)
			case lw < required:
				sp.LowWatermark = lw
				pending = append(pending, lowWatermarkWait{p: p, required: required, topic: i, partition: len(resp.Topics[i].Partitions)})
			default:
				sp.LowWatermark = lw
			}
			resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
		}
	}
	awaitLowWatermarks(ctx, resp, pending, time.Duration(req.TimeoutMillis)*time.Millisecond, alive)
	return resp, nil
}

// deletePartitionRecords raises one partition's log start to offset as its
// leader: the partition, the offset asked for (-1 resolved) and the low
// watermark now, or the error to answer.
func (n *Node) deletePartitionRecords(img *metadata.Image, tp topicPartition, offset int64, alive func(int32) bool) (*partition.Partition, int64, int64, error) {
	t, ok := img.Topic(tp.topic)
	switch {
	case !ok || tp.partition < 0 || int(tp.partition) >= len(t.Partitions):
		return nil, 0, 0, kerr.UnknownTopicOrPartition
	case metadata.IsInternalTopic(tp.topic):
		// Kafka: "Cannot delete records of internal topic".
		return nil, 0, 0, kerr.InvalidTopicException
	}
	p := n.partition(tp.topic, tp.partition)
	if p == nil {
		return nil, 0, 0, kerr.NotLeaderForPartition
	}
	required, lw, err := p.DeleteRecords(offset, alive)
	if err != nil {
		return nil, 0, 0, err
	}
	return p, required, lw, nil
}

// brokerAlive reports whether broker id is registered and not fenced, as
// Kafka's MetadataCache.hasAliveBroker: only such followers hold the low
// watermark back.
func (n *Node) brokerAlive(id int32) bool {
	b, ok := n.ctrl.Image().Brokers[id]
	return ok && !b.Fenced
}

// lowWatermarkWait is a DeleteRecords partition waiting for its low
// watermark to reach required; topic and partition place its answer.
type lowWatermarkWait struct {
	p                *partition.Partition
	required         int64
	topic, partition int
}

// awaitLowWatermarks waits until every pending partition's low watermark
// reached its offset, its replica stopped leading, or timeout passed, and
// answers each in resp, as Kafka's DelayedDeleteRecords.
func awaitLowWatermarks(ctx context.Context, resp *kmsg.DeleteRecordsResponse, pending []lowWatermarkWait, timeout time.Duration, alive func(int32) bool) {
	if len(pending) == 0 {
		return
	}
	wake := make(chan struct{}, 1)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		// WaitLowWatermark registers only while the low watermark is
		// below required: a fetch between the check and the wait is
		// never missed.
		rest := pending[:0]
		for _, w := range pending {
			if w.p.WaitLowWatermark(wake, w.required, alive) {
				rest = append(rest, w)
				continue
			}
			sp := &resp.Topics[w.topic].Partitions[w.partition]
			lw, err := w.p.LowWatermark(alive)
			if err != nil || lw < w.required {
				// No longer leading, or closed (its topic deleted).
				sp.ErrorCode, sp.LowWatermark = kerr.NotLeaderForPartition.Code, -1
				continue
			}
			sp.LowWatermark = lw
		}
		pending = rest
		if len(pending) == 0 {
			return
		}
		if expired := waitWake(ctx, wake, timer, pending, func(w lowWatermarkWait) *partition.Partition { return w.p }); expired {
			for _, w := range pending {
				sp := &resp.Topics[w.topic].Partitions[w.partition]
				if lw, err := w.p.LowWatermark(alive); err == nil && lw >= w.required {
					sp.LowWatermark = lw
					continue
				}
				sp.ErrorCode = kerr.RequestTimedOut.Code
			}
			return
		}
	}
}
