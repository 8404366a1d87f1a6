package broker

// ListOffsets (key 2), versions 0-11. Kafka 4 removed v0 (KIP-896); klog
// keeps it, the one range that is not Kafka 4.4's, for Burrow 1.2.1
// (Debian's, and scripts/smoke/burrow.sh's), whose Sarama sends v0 to read
// end offsets whatever Kafka version it is configured for.
//
// Special timestamps: -2 earliest (log start offset), -1 latest (high
// watermark, or the last stable offset for read_committed), -3 the record
// with the largest timestamp (KIP-734, v7+), -4 the local log start (v8+;
// klog keeps every segment locally, so it equals the log start). -5 latest
// tiered (v9+) and -6 earliest pending upload (v11+) return no offset (-1),
// as Kafka does without tiered storage; another negative timestamp gets
// UNSUPPORTED_VERSION, as from Kafka 4.4. Any other timestamp finds the first
// offset whose timestamp is at or after it, through the time index; none
// found returns offset -1.
//
// The client's CurrentLeaderEpoch is checked before leadership, as
// Kafka's Partition.getLocalLog does: a follower answers a stale epoch
// FENCED_LEADER_EPOCH and a future one UNKNOWN_LEADER_EPOCH, and only a
// current one (or -1) NOT_LEADER_OR_FOLLOWER; consumers list offsets at
// the leader only.
//
// A partition named more than once is answered once, with INVALID_REQUEST,
// and a topic named more than once is answered as one, as Kafka's
// ReplicaManager.fetchOffset answers ListOffsetsRequest.duplicatePartitions.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/wire"
)

func handleListOffsets(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	img := n.ctrl.Image()
	parts := make(occurrences[topicPartition])
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			parts.add(topicPartition{rt.Topic, rp.Partition})
		}
	}
	topics := make(map[string]int, len(req.Topics)) // index in resp.Topics
	described := n.topicsAllowed(rc, kmsg.ACLOperationDescribe)
	for ti := range req.Topics {
		rt := &req.Topics[ti]
		i, ok := topics[rt.Topic]
		if !ok {
			i = len(resp.Topics)
			topics[rt.Topic] = i
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			resp.Topics = append(resp.Topics, st)
		}
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			switch parts.next(topicPartition{rt.Topic, rp.Partition}) {
			case repeated:
				continue
			case firstOfMany:
				sp.ErrorCode = errorCode(errDuplicatePartition)
			case once:
				if !described(rt.Topic) {
					sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
					break
				}
				n.listPartitionOffset(img, req, rt.Topic, rp, &sp)
			}
			resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
		}
	}
	return resp, nil
}

// topicPartition names one partition of a request.
type topicPartition struct {
	topic     string
	partition int32
}

// listPartitionOffset answers one partition of a ListOffsets request.
func (n *Node) listPartitionOffset(img *metadata.Image, req *kmsg.ListOffsetsRequest, topic string, rp *kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	p, perr := n.localReplica(img, topic, rp.Partition)
	switch {
	case perr != nil:
		sp.ErrorCode = perr.Code
	default:
		var err error
		if rp.CurrentLeaderEpoch < -1 {
			// Kafka's ListOffsets takes every epoch but -1 as the
			// client's, so one below every epoch is fenced, before
			// leadership is checked; Fetch ignores any negative one.
			err = partition.ErrFencedLeaderEpoch
		} else {
			err = p.CheckLeader(rp.CurrentLeaderEpoch)
		}
		if err != nil {
			sp.ErrorCode = errorCode(err)
			break
		}
		if err := listOffset(p, req.IsolationLevel, rp.Timestamp, sp); err != nil {
			sp.ErrorCode = errorCode(err)
		}
	}
	if req.Version == 0 && sp.ErrorCode == 0 && sp.Offset >= 0 {
		sp.OldStyleOffsets = []int64{sp.Offset}
	}
}

func listOffset(p *partition.Partition, isolation int8, ts int64, sp *kmsg.ListOffsetsResponseTopicPartition) error {
	switch ts {
	case -2, -4:
		sp.Offset = p.LogStartOffset()
	case -1:
		sp.Offset = p.HighWatermark()
		if isolation == isolationReadCommitted {
			sp.Offset = p.LastStableOffset()
		}
		sp.LeaderEpoch = p.LeaderEpoch()
		return nil
	case -3:
		maxTS, off := p.MaxTimestamp()
		sp.Timestamp, sp.Offset = maxTS, off
	case -5, -6:
		return nil
	default:
		if ts < 0 {
			// A special timestamp klog does not know: Kafka 4.4 answers
			// UNSUPPORTED_VERSION (checked side by side by protodiff).
			return kerr.UnsupportedVersion
		}
		off, found, ok, err := p.OffsetForTimestamp(ts)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		sp.Offset, sp.Timestamp = off, found
	}
	if sp.Offset >= 0 {
		sp.LeaderEpoch = p.LeaderEpochOf(sp.Offset)
	}
	return nil
}
