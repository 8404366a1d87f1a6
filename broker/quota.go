package broker

// Client quotas, enforced as Kafka's KafkaApis does with broker/auth's
// Quotas:
//
//   - producer_byte_rate: a produce records the bytes of its record
//     batches (Kafka records the request's size: the difference is the
//     request's few framing bytes), acks=0 included;
//   - consumer_byte_rate: a client's fetch records the size of its
//     answer; a fetch over the quota is answered empty, with the session
//     it names unchanged, and what it recorded is taken back, as Kafka's
//     getThrottledResponse and unrecordQuotaSensor do. A fetch asks for at
//     most what the quota allows in a window. Followers' fetches are
//     exempt;
//   - request_percentage: the time the handler of a client's request ran,
//     from its decoding to its return, in percent of a second per second.
//     Kafka counts only the time on its request threads; klog's handlers
//     run on the connection's goroutine, so the APIs that park by design
//     are not measured — Fetch (its long poll), JoinGroup and SyncGroup
//     (the rebalance) — and the others' waits for the controller or a
//     coordinator are counted, where Kafka's purgatories would not count
//     them.
//
// A throttled client gets throttle_time_ms in its answer at once and its
// connection is muted for that long (wire.Reply.Throttle), as Kafka does
// since KIP-219, whatever the request's version. Followers' fetches and
// transaction markers, the other nodes' work, are never throttled.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
)

// quotaExempt reports whether a request is under no client quota: one
// made up without a connection. Followers' fetches are exempt where the
// fetch handler tells them (authorized by CLUSTER_ACTION), and the
// cluster-action APIs in throttleRequest, as Kafka exempts them; a
// client id proves nothing, any client can name itself a klog node.
func quotaExempt(rc *wire.RequestContext) bool {
	return rc == nil
}

// recordQuota records v against the client's quota of kind and returns
// how long it is to be throttled.
func (n *Node) recordQuota(kind auth.QuotaKind, rc *wire.RequestContext, v float64) time.Duration {
	if quotaExempt(rc) || !n.quotas.Enabled(kind) {
		return 0
	}
	return n.quotas.Record(kind, rc.Principal, rc.ClientID, v, time.Now())
}

// produceBytes is the bytes of record batches a produce carries.
func produceBytes(req *kmsg.ProduceRequest) int {
	size := 0
	for ti := range req.Topics {
		for pi := range req.Topics[ti].Partitions {
			size += len(req.Topics[ti].Partitions[pi].Records)
		}
	}
	return size
}

// throttleMillis is d in whole milliseconds, for throttle_time_ms.
func throttleMillis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), 1<<31-1))
}

// fetchQuotaBytes bounds what a client's fetch may read to what its
// consumer_byte_rate allows in a window (Kafka's getMaxValueInQuotaWindow).
func (n *Node) fetchQuotaBytes(rc *wire.RequestContext, maxBytes int) int {
	if quotaExempt(rc) || !n.quotas.Enabled(auth.FetchQuota) {
		return maxBytes
	}
	if m, ok := n.quotas.MaxInWindow(auth.FetchQuota, rc.Principal, rc.ClientID); ok && m < float64(maxBytes) {
		return max(int(m), 1)
	}
	return maxBytes
}

// throttleFetch records a client's fetch answer against its
// consumer_byte_rate. Over the quota, the answer is emptied (and what was
// recorded taken back) and the throttle returned; the caller then leaves
// the fetch session as it was.
func (n *Node) throttleFetch(rc *wire.RequestContext, fc *fetchContext, resp *kmsg.FetchResponse) time.Duration {
	if quotaExempt(rc) || !n.quotas.Enabled(auth.FetchQuota) {
		return 0
	}
	size := float64(fetchResponseSize(resp))
	now := time.Now()
	d := n.quotas.Record(auth.FetchQuota, rc.Principal, rc.ClientID, size, now)
	if d <= 0 {
		return 0
	}
	n.quotas.Unrecord(auth.FetchQuota, rc.Principal, rc.ClientID, size, now)
	resp.Topics, resp.SessionID = nil, 0
	if fc.session != nil {
		resp.SessionID = fc.session.id
	}
	resp.ThrottleMillis = throttleMillis(d)
	return d
}

// unmeasuredAPIs are the APIs whose handlers park by design, not measured
// against request_percentage.
// WriteTxnMarkers, a cluster action that only other nodes may send, is
// exempt as Kafka exempts the cluster-action APIs.
var unmeasuredAPIs = map[int16]bool{
	kmsg.Fetch.Int16():           true,
	kmsg.JoinGroup.Int16():       true,
	kmsg.SyncGroup.Int16():       true,
	kmsg.WriteTxnMarkers.Int16(): true,
}

// throttleRequest records the handler time of a client's request against
// its request_percentage and throttles reply by the longer of that and
// the throttle its handler chose, in throttle_time_ms too.
func (n *Node) throttleRequest(rc *wire.RequestContext, req kmsg.Request, reply *wire.Reply) {
	if quotaExempt(rc) || unmeasuredAPIs[req.Key()] || !n.quotas.Enabled(auth.RequestQuota) {
		return
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		return // as Kafka: no answer to carry the throttle
	}
	elapsed := time.Since(rc.Start)
	d := n.recordQuota(auth.RequestQuota, rc, float64(elapsed.Nanoseconds())*100/float64(time.Second))
	if d <= reply.Throttle {
		return
	}
	reply.Throttle = d
	setThrottle(reply.Response, d)
	if later := reply.Later; later != nil {
		reply.Later = func(ctx context.Context) kmsg.Response {
			resp := later(ctx)
			setThrottle(resp, d)
			return resp
		}
	}
}

// setThrottle sets resp's throttle_time_ms to d, when it has one and it
// is less.
func setThrottle(resp kmsg.Response, d time.Duration) {
	t, ok := resp.(interface {
		kmsg.ThrottleResponse
		kmsg.SetThrottleResponse
	})
	if !ok {
		return
	}
	if ms, _ := t.Throttle(); ms < throttleMillis(d) {
		t.SetThrottle(throttleMillis(d))
	}
}
