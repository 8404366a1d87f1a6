package broker

// ShareFetch (key 78), versions 1-2.
//
// A share group member's fetch (KIP-932), served by each partition's
// leader. Its share session (broker/share.Sessions) follows Kafka 4.4's
// ShareSessionCache: epoch 0 opens the member's session afresh on the
// partitions named (acknowledgements with it are INVALID_REQUEST, a full
// cache SHARE_SESSION_LIMIT_REACHED), each later request carries the next
// epoch (else INVALID_SHARE_SESSION_EPOCH; no session,
// SHARE_SESSION_NOT_FOUND) and adds partitions or forgets them, and epoch
// -1 only acknowledges and closes the session, releasing what the member
// still holds. Piggybacked acknowledgements are applied first, per
// partition all or nothing, their outcome in AcknowledgeErrorCode
// (INVALID_REQUEST for malformed batches, INVALID_RECORD_STATE for records
// the member does not hold). Then every partition of the session acquires
// for the member what it can (broker/share.Partition.Acquire): records
// released or whose lock lapsed, then new records up to the high
// watermark, within the record lock limit, MaxRecords (ShareAcquireMode
// v2: whole batches, or exactly the limit) and MaxBytes (capped by
// fetch.max.bytes; the first batch whatever its size). Each partition
// returns the whole batches holding what it acquired, with the acquired
// runs and their delivery counts. With nothing acquired the request waits
// up to MaxWaitMillis for new records, an acknowledgement or release in
// the group, or the earliest lock to lapse. A v2 fetch with IsRenewAck
// renews locks and acquires nothing. The response names the partitions
// with records, an error or an acknowledgement outcome, as Kafka's does.
//
// Not yet: share-partition state is in memory (a new leader or a restart
// starts it again at the high watermark, share.auto.offset.reset's
// default); group configs (share.auto.offset.reset, share.isolation.level:
// read_committed) are not served; BatchSize is not used to cut
// acquisitions; the response bytes are not taken from
// klog.queued.max.response.bytes as a Fetch's are.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/share"
	"github.com/klogdev/klog/broker/wire"
)

func handleShareFetch(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ShareFetchRequest)
	resp := r.ResponseKind().(*kmsg.ShareFetchResponse)
	sr, code := n.newShareRequest(rc, r.GroupID, r.MemberID)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			sr.add(t.TopicID, p.Partition, shareAcks(p.AcknowledgementBatches, func(b *kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) (int64, int64, []int8) {
				return b.FirstOffset, b.LastOffset, b.AcknowledgeTypes
			}))
		}
	}
	fetch, err := n.shareFetchSession(sr, r)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = shareErrorCode(err)
		return resp, nil
	}
	resp.AcquisitionLockTimeoutMillis = int32(n.shares.LockDuration() / time.Millisecond)
	out := &shareFetchAnswer{resp: resp, n: n, listener: rc.Listener}
	renew := r.Version >= 2 && r.IsRenewAck
	n.applyShareAcks(rc, sr, renew, func(tp share.TopicPartition, err error) {
		part := out.partition(tp)
		part.AcknowledgeErrorCode, part.AcknowledgeErrorMessage = shareErrorCode(err)
	})
	if r.ShareSessionEpoch == share.FinalEpoch {
		n.closeShareSession(sr)
		return out.done(), nil
	}
	if !renew {
		n.shareFetchRecords(ctx, rc, sr.group, sr.member, r, fetch, out)
	}
	return out.done(), nil
}

// shareFetchSession takes the request's epoch in the member's share
// session and returns the partitions to fetch: those named when it opens
// the session (epoch 0), none when it closes it (-1), else the session's.
func (n *Node) shareFetchSession(sr *shareRequest, r *kmsg.ShareFetchRequest) ([]share.TopicPartition, error) {
	s := n.shares.Sessions
	switch r.ShareSessionEpoch {
	case share.InitialEpoch:
		if len(sr.acks) > 0 {
			return nil, kerr.InvalidRequest
		}
		return sr.named, s.Open(sr.key, sr.named)
	case share.FinalEpoch:
		if !s.Exists(sr.key) {
			return nil, share.ErrSessionNotFound
		}
		return nil, nil
	}
	forget := shareTopicPartitions(r.ForgottenTopicsData, func(t *kmsg.ShareFetchRequestForgottenTopicsData) ([16]byte, []int32) {
		return t.TopicID, t.Partitions
	})
	return s.Next(sr.key, r.ShareSessionEpoch, sr.named, forget)
}

// applyShareAcks applies each partition's acknowledgements, in the order
// the request names the partitions, and reports each outcome.
func (n *Node) applyShareAcks(rc *wire.RequestContext, sr *shareRequest, renew bool, report func(share.TopicPartition, error)) {
	if len(sr.acks) == 0 {
		return
	}
	img := n.ctrl.Image()
	readable := n.topicsAllowed(rc, kmsg.ACLOperationRead)
	for _, tp := range sr.named {
		batches, ok := sr.acks[tp]
		if !ok {
			continue
		}
		delete(sr.acks, tp) // a partition named twice is acknowledged once
		report(tp, n.acknowledgeShare(sr.group, sr.member, n.resolveSharePart(img, rc, readable, tp), batches, renew))
	}
}

// closeShareSession ends the member's share session (epoch -1) and
// releases the records it still holds on the session's partitions.
func (n *Node) closeShareSession(sr *shareRequest) {
	parts, _ := n.shares.Sessions.Close(sr.key)
	n.shares.ReleaseMember(sr.group, sr.member, parts)
}

// shareFetchRecords acquires records of parts for member, waiting up to
// the request's MaxWaitMillis while none can be acquired.
func (n *Node) shareFetchRecords(ctx context.Context, rc *wire.RequestContext, group, member string, r *kmsg.ShareFetchRequest, tps []share.TopicPartition, out *shareFetchAnswer) {
	img := n.ctrl.Image()
	readable := n.topicsAllowed(rc, kmsg.ACLOperationRead)
	var valid []sharePart
	for _, tp := range tps {
		sp := n.resolveSharePart(img, rc, readable, tp)
		if sp.err != nil {
			part := out.partition(tp)
			part.ErrorCode, part.ErrorMessage = shareErrorCode(sp.err)
			out.hint(sp, part)
			continue
		}
		valid = append(valid, sp)
	}
	maxBytes := int(min(r.MaxBytes, n.settings().FetchMaxBytes))
	mode := share.AcquireMode(r.ShareAcquireMode)
	wait := time.NewTimer(time.Duration(r.MaxWaitMillis) * time.Millisecond)
	defer wait.Stop()
	for refused := 0; ; {
		wake := n.shares.Wake(group)
		ch := make(chan struct{}, 1)
		got, ready, lockDeadline := n.shareAcquireAll(group, member, valid, maxBytes, int(r.MaxRecords), mode, ch, out)
		if ready {
			// A partition refused the wait: records past what it
			// acquired are readable. Look again at once, but not for
			// ever (a partition closing refuses every wait).
			refused++
		} else {
			refused = 0
		}
		if got || r.MaxWaitMillis <= 0 || refused > 1 {
			n.unwaitShare(valid, ch)
			return
		}
		done := waitShare(ctx, ch, wake, wait.C, lockDeadline, n.clock.Now())
		n.unwaitShare(valid, ch)
		if done {
			return
		}
	}
}

// shareAcquireAll acquires from each partition in turn within the byte and
// record limits, and registers ch to be told of new records on the
// partitions where more could be acquired. It reports whether anything was
// acquired, whether a partition refused the wait for records already
// readable (ready), and the earliest lock deadline.
func (n *Node) shareAcquireAll(group, member string, parts []sharePart, maxBytes, maxRecords int, mode share.AcquireMode, ch chan struct{}, out *shareFetchAnswer) (got, ready bool, lockDeadline time.Time) {
	limited := maxRecords > 0
	for _, sp := range parts {
		if maxBytes <= 0 || limited && maxRecords <= 0 {
			break
		}
		a := n.acquireShare(group, member, sp, maxBytes, maxRecords, mode)
		if !a.deadline.IsZero() && (lockDeadline.IsZero() || a.deadline.Before(lockDeadline)) {
			lockDeadline = a.deadline
		}
		switch {
		case a.err != nil:
			part := out.partition(sp.tp)
			part.ErrorCode, part.ErrorMessage = kerr.UnknownServerError.Code, errorMessage(a.err)
		case len(a.acquired) > 0:
			got = true
			part := out.partition(sp.tp)
			part.Records = a.records
			for _, ar := range a.acquired {
				part.AcquiredRecords = append(part.AcquiredRecords, kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{
					FirstOffset: ar.First, LastOffset: ar.Last, DeliveryCount: ar.Deliveries,
				})
				maxRecords -= int(ar.Last - ar.First + 1)
			}
			maxBytes -= len(a.records)
		case a.waitFrom >= 0 && !got:
			ready = !sp.p.Wait(ch, a.waitFrom, partition.ReadUncommitted) || ready
		}
	}
	return got, ready, lockDeadline
}

// waitShare waits for new records (ch), a change in the group's
// share-partitions (wake) or the earliest lock deadline (by the node's
// clock, now), and reports true when the fetch's wait (until) or its
// context ended first.
func waitShare(ctx context.Context, ch, wake <-chan struct{}, until <-chan time.Time, lockDeadline, now time.Time) bool {
	var lapse <-chan time.Time
	if !lockDeadline.IsZero() {
		t := time.NewTimer(max(lockDeadline.Sub(now), 0))
		defer t.Stop()
		lapse = t.C
	}
	select {
	case <-ch:
	case <-wake:
	case <-lapse:
	case <-until:
		return true
	case <-ctx.Done():
		return true
	}
	return false
}

func (n *Node) unwaitShare(parts []sharePart, ch chan struct{}) {
	for _, sp := range parts {
		sp.p.Unwait(ch)
	}
}

// shareFetchAnswer builds a ShareFetch response: one entry per topic in the
// order partitions are first answered, one per partition.
type shareFetchAnswer struct {
	resp     *kmsg.ShareFetchResponse
	n        *Node
	listener string
	hints    *leaderHints
	index    shareIndex
}

// partition is tp's entry, added when missing; the pointer holds until
// the next call.
func (a *shareFetchAnswer) partition(tp share.TopicPartition) *kmsg.ShareFetchResponseTopicPartition {
	ti, pi := a.index.find(tp, len(a.resp.Topics), func(ti int) int { return len(a.resp.Topics[ti].Partitions) })
	if ti == len(a.resp.Topics) {
		a.resp.Topics = append(a.resp.Topics, kmsg.ShareFetchResponseTopic{TopicID: tp.TopicID})
	}
	t := &a.resp.Topics[ti]
	if pi == len(t.Partitions) {
		p := kmsg.NewShareFetchResponseTopicPartition()
		p.Partition = tp.Partition
		p.Records = []byte{} // not nullable: Kafka's clients fail on null
		t.Partitions = append(t.Partitions, p)
	}
	return &t.Partitions[pi]
}

// hint names the current leader of a partition refused
// NOT_LEADER_OR_FOLLOWER (KIP-951), its endpoint listed in NodeEndpoints.
func (a *shareFetchAnswer) hint(sp sharePart, part *kmsg.ShareFetchResponseTopicPartition) {
	if sp.err != kerr.NotLeaderForPartition {
		return
	}
	if a.hints == nil {
		a.hints = a.n.leaderHints(a.listener)
	}
	part.CurrentLeader.LeaderID, part.CurrentLeader.LeaderEpoch = a.hints.leader(sp.name, sp.tp.Partition)
}

// done is the response, with the endpoints of the leaders hinted at.
func (a *shareFetchAnswer) done() *kmsg.ShareFetchResponse {
	if a.hints != nil {
		for _, b := range a.hints.sorted() {
			a.resp.NodeEndpoints = append(a.resp.NodeEndpoints, kmsg.ShareFetchResponseNodeEndpoint{NodeID: b.ID, Host: b.Host, Port: b.Port, Rack: rackPtr(b.Rack)})
		}
	}
	return a.resp
}
