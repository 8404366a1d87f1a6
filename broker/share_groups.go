package broker

// Share groups (KIP-932) on a node: the group's membership is the group
// coordinator's (broker/group, ShareGroupHeartbeat and
// ShareGroupDescribe), the share-partitions and share sessions are the
// partition leader's (broker/share, ShareFetch and ShareAcknowledge).
// This file wires the second to the node's partitions: which partitions a
// share request names, their acknowledgements, and what a fetch acquires.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/share"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/store/log/record"
)

// newShareManager builds the node's share-partitions and share sessions
// from the broker's group.share.* configs, locks timed by the node's clock.
func (n *Node) newShareManager() *share.Manager {
	s := n.settings()
	cfg := share.Config{
		LockDuration:   s.Group.Share.RecordLockDuration,
		DeliveryLimit:  int(s.Group.Share.DeliveryCountLimit),
		MaxRecordLocks: int(s.Group.Share.PartitionMaxRecordLocks),
	}
	return share.NewManager(cfg, n.clock.Now, share.NewSessions(int(s.Group.Share.MaxShareSessions), int(s.MaxPartitions)))
}

// shareGroupsEnabled is the share.version feature's gate: with it below 1
// the share group APIs answer UNSUPPORTED_VERSION, as Kafka's KafkaApis
// does while share groups are off.
func (n *Node) shareGroupsEnabled() bool {
	return n.ctrl.Image().FeatureLevel(metadata.ShareVersion) >= 1
}

// shareRequest is what a ShareFetch and a ShareAcknowledge have in
// common, as broker/share names it: the member, the partitions named in
// the request's order, and their acknowledgements.
type shareRequest struct {
	group, member string
	key           share.SessionKey
	named         []share.TopicPartition
	acks          map[share.TopicPartition][]share.AckBatch
}

// newShareRequest starts the shareRequest of group and member, or answers
// the refusal of the whole request (shareRequestDenied).
func (n *Node) newShareRequest(rc *wire.RequestContext, group, member *string) (*shareRequest, int16) {
	r := &shareRequest{acks: make(map[share.TopicPartition][]share.AckBatch)}
	if group != nil {
		r.group = *group
	}
	if member != nil {
		r.member = *member
	}
	r.key = share.SessionKey{Group: r.group, Member: r.member}
	return r, n.shareRequestDenied(rc, r.group, r.member)
}

// add names a partition of the request with its acknowledgements.
func (r *shareRequest) add(topicID [16]byte, partition int32, acks []share.AckBatch) {
	tp := share.TopicPartition{TopicID: topicID, Partition: partition}
	r.named = append(r.named, tp)
	if len(acks) > 0 {
		r.acks[tp] = acks
	}
}

// shareRequestDenied is the top-level answer of a ShareFetch or
// ShareAcknowledge that is refused as a whole: share groups off
// (UNSUPPORTED_VERSION), no READ on the group, no group or member id.
func (n *Node) shareRequestDenied(rc *wire.RequestContext, group, member string) int16 {
	switch {
	case !n.shareGroupsEnabled():
		return kerr.UnsupportedVersion.Code
	case n.groupDenied(rc, kmsg.ACLOperationRead, group) != 0:
		return kerr.GroupAuthorizationFailed.Code
	case group == "" || member == "":
		return kerr.InvalidRequest.Code
	}
	return 0
}

// sharePart is one partition a share request names, resolved: its topic's
// name, this node's leading replica, or the error it is answered with.
type sharePart struct {
	tp   share.TopicPartition
	name string
	p    *partition.Partition
	err  *kerr.Error
}

// resolveSharePart finds tp on this node: UNKNOWN_TOPIC_ID for an id no
// topic has, TOPIC_AUTHORIZATION_FAILED without READ on the topic,
// UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER as a fetch's
// partition.
func (n *Node) resolveSharePart(img *metadata.Image, rc *wire.RequestContext, readable func(string) bool, tp share.TopicPartition) sharePart {
	sp := sharePart{tp: tp}
	t, ok := img.TopicByID(tp.TopicID)
	if !ok {
		sp.err = kerr.UnknownTopicID
		return sp
	}
	sp.name = t.Name
	if !readable(t.Name) {
		sp.err = kerr.TopicAuthorizationFailed
		return sp
	}
	sp.p, sp.err = n.leaderPartition(img, t.Name, tp.Partition)
	return sp
}

// shareKey names the share-partition of group on sp.
func shareKey(group string, tp share.TopicPartition) share.Key {
	return share.Key{Group: group, TopicID: tp.TopicID, Partition: tp.Partition}
}

// withSharePartition runs fn on group's share-partition of sp, created at
// the partition's high watermark (share.auto.offset.reset's default,
// latest; group configs are not served yet); it returns the earliest lock
// deadline afterwards.
func (n *Node) withSharePartition(group string, sp sharePart, fn func(p *share.Partition, now time.Time) bool) time.Time {
	return n.shares.With(shareKey(group, sp.tp), sp.p.LeaderEpoch(), sp.p.LogStartOffset(), sp.p.HighWatermark, fn)
}

// shareAcks converts a request's acknowledgement batches.
func shareAcks[B any](batches []B, get func(*B) (first, last int64, types []int8)) []share.AckBatch {
	out := make([]share.AckBatch, 0, len(batches))
	for i := range batches {
		first, last, types := get(&batches[i])
		b := share.AckBatch{First: first, Last: last, Types: make([]share.AckType, len(types))}
		for j, t := range types {
			b.Types[j] = share.AckType(t)
		}
		out = append(out, b)
	}
	return out
}

// acknowledgeShare applies member's acknowledgements of sp in group, and
// returns the partition's answer: INVALID_REQUEST for malformed batches,
// INVALID_RECORD_STATE for records the member does not hold (nothing of
// the partition's acknowledgements is then applied), or sp's own error.
func (n *Node) acknowledgeShare(group, member string, sp sharePart, acks []share.AckBatch, renew bool) error {
	if sp.err != nil {
		return sp.err
	}
	if err := share.ValidateAcks(acks, renew); err != nil {
		return err
	}
	var err error
	n.withSharePartition(group, sp, func(p *share.Partition, now time.Time) bool {
		err = p.Acknowledge(member, now, acks)
		return err == nil
	})
	return err
}

// shareErrorCode is the Kafka error of an error of broker/share or of a
// partition's resolution, and the message sent with it.
func shareErrorCode(err error) (int16, *string) {
	var ke *kerr.Error
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ke):
		return ke.Code, nil
	case errors.Is(err, share.ErrInvalidAcks), errors.Is(err, share.ErrSessionTooLarge):
		msg := err.Error()
		return kerr.InvalidRequest.Code, &msg
	case errors.Is(err, share.ErrInvalidRecordState):
		msg := err.Error()
		return kerr.InvalidRecordState.Code, &msg
	case errors.Is(err, share.ErrSessionNotFound):
		return kerr.ShareSessionNotFound.Code, nil
	case errors.Is(err, share.ErrInvalidSessionEpoch):
		return kerr.InvalidShareSessionEpoch.Code, nil
	case errors.Is(err, share.ErrSessionLimit):
		return kerr.ShareSessionLimitReached.Code, nil
	}
	return kerr.UnknownServerError.Code, nil
}

// shareAcquisition is what one partition of a ShareFetch acquired.
type shareAcquisition struct {
	records  []byte
	acquired []share.AcquiredRange
	// waitFrom is where new records would be acquired from, -1 when the
	// share-partition's window is full (only acknowledgements and
	// lapsed locks can free it).
	waitFrom int64
	deadline time.Time // the earliest lock deadline
	err      error
}

// acquireShare acquires records of sp for member of group: up to
// maxRecords records (see share.Partition.Acquire) from at most maxBytes
// of the log (the first batch whatever its size), returning the whole
// batches that hold them.
func (n *Node) acquireShare(group, member string, sp sharePart, maxBytes, maxRecords int, mode share.AcquireMode) shareAcquisition {
	a := shareAcquisition{waitFrom: -1}
	a.deadline = n.withSharePartition(group, sp, func(p *share.Partition, now time.Time) bool {
		hw := sp.p.HighWatermark()
		if !p.CanAcquire(hw) {
			if p.End()-p.Start() < int64(n.settings().Group.Share.PartitionMaxRecordLocks) {
				a.waitFrom = p.End()
			}
			return false
		}
		buf, err := sp.p.Read(nil, p.NextFetchOffset(), maxBytes, partition.ReadUncommitted, true)
		if err != nil {
			a.err = err
			return false
		}
		view := record.ParseBatches(buf)
		var spans []share.Batch
		for _, b := range view.All() {
			spans = append(spans, share.Batch{First: b.BaseOffset(), Last: b.LastOffset(), Control: b.Attributes().Control()})
		}
		a.acquired = p.Acquire(member, now, spans, maxRecords, mode)
		a.records = batchesHolding(&view, a.acquired)
		a.waitFrom = p.End()
		return false
	})
	if len(a.acquired) > 0 {
		a.waitFrom = -1
	}
	return a
}

// batchesHolding is the run of view's batches from the first holding an
// acquired offset to the last holding one; nil when nothing was acquired.
func batchesHolding(view *record.Batches, acquired []share.AcquiredRange) []byte {
	if len(acquired) == 0 {
		return nil
	}
	first, last := acquired[0].First, acquired[len(acquired)-1].Last
	from, to := -1, -1
	for pos, b := range view.All() {
		if b.LastOffset() >= first && from < 0 {
			from = pos
		}
		if b.BaseOffset() <= last {
			to = pos + len(b)
		}
	}
	if from < 0 || to <= from {
		return nil
	}
	return view.Bytes()[from:to]
}

// shareMemberGone closes the share session of a member that left its group
// or was fenced, and releases the records it holds: the group
// coordinator's OnShareMemberGone.
func (n *Node) shareMemberGone(group, member string) {
	n.shares.MemberGone(group, member)
}

// shareTopicPartitions lists a request's partitions as broker/share names
// them, topic by topic.
func shareTopicPartitions[T any](topics []T, each func(*T) ([16]byte, []int32)) []share.TopicPartition {
	var out []share.TopicPartition
	for i := range topics {
		id, parts := each(&topics[i])
		for _, p := range parts {
			out = append(out, share.TopicPartition{TopicID: id, Partition: p})
		}
	}
	return out
}

// shareIndex places the partitions of a share response: topics in the
// order first answered, partitions within them likewise.
type shareIndex struct {
	topics map[[16]byte]int
	parts  map[share.TopicPartition]int
}

// find is the topic and partition index of tp in a response with topics
// topics (partitions(ti) partitions in topic ti); an index equal to the
// count is a new entry the caller appends.
func (x *shareIndex) find(tp share.TopicPartition, topics int, partitions func(ti int) int) (ti, pi int) {
	if x.topics == nil {
		x.topics, x.parts = make(map[[16]byte]int), make(map[share.TopicPartition]int)
	}
	ti, ok := x.topics[tp.TopicID]
	if !ok {
		ti = topics
		x.topics[tp.TopicID] = ti
		x.parts[tp] = 0
		return ti, 0
	}
	pi, ok = x.parts[tp]
	if !ok {
		pi = partitions(ti)
		x.parts[tp] = pi
	}
	return ti, pi
}
