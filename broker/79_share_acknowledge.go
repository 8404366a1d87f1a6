package broker

// ShareAcknowledge (key 79), versions 1-2.
//
// A share group member's acknowledgements (KIP-932) without a fetch, to a
// partition's leader, within the member's share session (opened by a
// ShareFetch): epoch 0 is INVALID_SHARE_SESSION_EPOCH, another epoch than
// the session's next INVALID_SHARE_SESSION_EPOCH, no session
// SHARE_SESSION_NOT_FOUND; -1 applies the acknowledgements, closes the
// session and releases what the member still holds. Each partition's
// batches are applied all or nothing: INVALID_REQUEST for malformed
// batches (out of order, overlapping, last before first, a type list of
// the wrong length, an unknown type; RENEW only in v2 with IsRenewAck),
// INVALID_RECORD_STATE for records the member does not hold (not
// acquired, another member's, already acknowledged, lock lapsed, outside
// the in-flight records). ACCEPT acknowledges, RELEASE gives a record back
// (archived once delivered group.share.delivery.count.limit times),
// REJECT and GAP archive it, RENEW restarts its lock.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/share"
	"github.com/klogdev/klog/broker/wire"
)

func handleShareAcknowledge(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ShareAcknowledgeRequest)
	resp := r.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	sr, code := n.newShareRequest(rc, r.GroupID, r.MemberID)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	if err := n.shares.Sessions.Ack(sr.key, r.ShareSessionEpoch); err != nil {
		resp.ErrorCode, resp.ErrorMessage = shareErrorCode(err)
		return resp, nil
	}
	if r.Version >= 2 {
		resp.AcquisitionLockTimeoutMillis = int32(n.shares.LockDuration() / time.Millisecond)
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			sr.add(t.TopicID, p.Partition, shareAcks(p.AcknowledgementBatches, func(b *kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) (int64, int64, []int8) {
				return b.FirstOffset, b.LastOffset, b.AcknowledgeTypes
			}))
		}
	}
	var x shareIndex
	n.applyShareAcks(rc, sr, r.Version >= 2 && r.IsRenewAck, func(tp share.TopicPartition, err error) {
		ti, pi := x.find(tp, len(resp.Topics), func(ti int) int { return len(resp.Topics[ti].Partitions) })
		if ti == len(resp.Topics) {
			resp.Topics = append(resp.Topics, kmsg.ShareAcknowledgeResponseTopic{TopicID: tp.TopicID})
		}
		p := kmsg.NewShareAcknowledgeResponseTopicPartition()
		p.Partition = tp.Partition
		p.ErrorCode, p.ErrorMessage = shareErrorCode(err)
		if pi == len(resp.Topics[ti].Partitions) {
			resp.Topics[ti].Partitions = append(resp.Topics[ti].Partitions, p)
		}
	})
	if r.ShareSessionEpoch == share.FinalEpoch {
		n.closeShareSession(sr)
	}
	return resp, nil
}
