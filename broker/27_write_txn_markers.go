package broker

// WriteTxnMarkers (key 27), versions 1-2 (v0 was removed in Kafka 4,
// KIP-896).
//
// In Kafka an inter-broker API (CLUSTER_ACTION, or ALTER on the cluster
// for Admin.abortTransaction): the request a transaction coordinator sends
// partition leaders, and the one operators send to end a hanging
// transaction (klog txn abort, kafka-transactions.sh abort). klog's
// coordinator writes the markers of partitions it leads in-process
// (txnMarkers) and sends the others here, to their leaders. klog has no
// authorizer and no inter-broker listener, so rather than trusting every
// request as Kafka does without an authorizer, each marker is decided by
// the node's coordinator (txn.Coordinator.ClientMarker): a coordinator
// epoch above that of the producer's coordinator, or above the highest
// leader epoch of __transaction_state, answers
// CLUSTER_AUTHORIZATION_FAILED, a transaction the coordinator runs is
// aborted by the coordinator itself (fencing its producer) and never
// committed or ended behind its back, and a transaction no coordinator of
// this node runs (another node's, or none) gets the marker as sent: a
// client's marker for another node's transaction is written as Kafka
// writes it. A marker in
// __consumer_offsets also completes the producer's transactional offset
// commits there. v2 (KIP-1228) carries the transaction version of each
// marker: from 2 the marker's epoch must be above the producer's epoch in
// the partition (INVALID_PRODUCER_EPOCH otherwise), as the coordinator of
// a transaction version 2 bumped it (log.Marker.TransactionVersion).

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/store/log"
)

// markerReplicationWait bounds how long a marker waits for its
// partition's followers before the answer is REQUEST_TIMED_OUT: below the
// sending node's peerRequestTimeout, so the coordinator hears it and
// retries.
const markerReplicationWait = 5 * time.Second

func handleWriteTxnMarkers(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	img := n.ctrl.Image()
	type target struct {
		sp    *kmsg.WriteTxnMarkersResponseMarkerTopicPartition
		topic string
		p     *partition.Partition
		end   int64 // the offset after its marker, once written
	}
	var targets []target
	// The transaction coordinators' request: CLUSTER_ACTION, else every
	// partition CLUSTER_AUTHORIZATION_FAILED.
	denied := !n.authorizeCluster(rc, kmsg.ACLOperationClusterAction)
	for _, m := range req.Markers {
		sm := kmsg.NewWriteTxnMarkersResponseMarker()
		sm.ProducerID = m.ProducerID
		targets = targets[:0]
		for _, rt := range m.Topics {
			st := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			st.Topic = rt.Topic
			st.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(rt.Partitions))
			for i, index := range rt.Partitions {
				sp := &st.Partitions[i]
				*sp = kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				sp.Partition = index
				p, perr := n.leaderPartition(img, rt.Topic, index)
				if denied {
					perr = kerr.ClusterAuthorizationFailed
				}
				if perr != nil {
					sp.ErrorCode = perr.Code
					continue
				}
				targets = append(targets, target{sp: sp, topic: rt.Topic, p: p})
			}
			sm.Topics = append(sm.Topics, st)
		}
		if len(targets) > 0 {
			marker := log.Marker{
				ProducerID:         m.ProducerID,
				ProducerEpoch:      m.ProducerEpoch,
				Commit:             m.Committed,
				CoordinatorEpoch:   m.CoordinatorEpoch,
				TransactionVersion: m.TransactionVersion,
			}
			err := n.txns.ClientMarker(ctx, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, highestTxnStateEpoch(img), func() {
				for i := range targets {
					t := &targets[i]
					end, err := n.appendMarker(t.p, t.topic, t.sp.Partition, marker, math.MaxInt32)
					if err != nil {
						t.sp.ErrorCode = errorCode(err)
					}
					t.end = end
				}
			})
			if err != nil {
				for _, t := range targets {
					t.sp.ErrorCode = txn.Code(err)
				}
			}
			// Answered once replicated, outside the coordinator's
			// actor: a marker append is acks=all in Kafka.
			wctx, cancel := context.WithTimeout(ctx, markerReplicationWait)
			for _, t := range targets {
				if t.end > 0 && t.sp.ErrorCode == 0 {
					if werr := markerCommitted(wctx, t.p, t.end); werr != nil {
						t.sp.ErrorCode = markerWaitCode(werr)
					}
				}
			}
			cancel()
		}
		resp.Markers = append(resp.Markers, sm)
	}
	return resp, nil
}

// markerWaitCode is the answer for a marker written but not replicated
// before the request's end: REQUEST_TIMED_OUT, as Kafka's DelayedProduce
// answers, or NOT_LEADER_OR_FOLLOWER once this node no longer leads. The
// coordinator retries both.
func markerWaitCode(err error) int16 {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return kerr.RequestTimedOut.Code
	}
	return errorCode(err)
}
