package broker

// WriteTxnMarkers (key 27), versions 0-1.
//
// In Kafka an inter-broker API (CLUSTER_ACTION, or ALTER on the cluster
// for Admin.abortTransaction): the request a transaction coordinator sends
// partition leaders, and the one operators send to end a hanging
// transaction (klog txn abort, kafka-transactions.sh abort). klog's
// coordinator writes its markers in-process (txnMarkers), so every request
// here comes from a client; klog has no authorizer and no inter-broker
// listener, so rather than trusting it as Kafka does without an
// authorizer, each marker is decided by the node's coordinator
// (txn.Coordinator.ClientMarker): a coordinator epoch above the producer's
// coordinator answers CLUSTER_AUTHORIZATION_FAILED, a transaction the
// coordinator runs is aborted by the coordinator itself (fencing its
// producer) and never committed or ended behind its back, and a
// transaction no coordinator runs gets the marker as sent. A marker in
// __consumer_offsets also completes the producer's transactional offset
// commits there.

import (
	"context"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/store/log"
)

func handleWriteTxnMarkers(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	img := n.ctrl.Image()
	type target struct {
		sp    *kmsg.WriteTxnMarkersResponseMarkerTopicPartition
		topic string
		p     *partition.Partition
	}
	var targets []target
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
				if perr != nil {
					sp.ErrorCode = perr.Code
					continue
				}
				targets = append(targets, target{sp, rt.Topic, p})
			}
			sm.Topics = append(sm.Topics, st)
		}
		if len(targets) > 0 {
			marker := log.Marker{
				ProducerID:       m.ProducerID,
				ProducerEpoch:    m.ProducerEpoch,
				Commit:           m.Committed,
				CoordinatorEpoch: m.CoordinatorEpoch,
			}
			err := n.txns.ClientMarker(ctx, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, func() {
				for _, t := range targets {
					if err := n.appendMarker(t.p, t.topic, t.sp.Partition, marker, math.MaxInt32); err != nil {
						t.sp.ErrorCode = errorCode(err)
					}
				}
			})
			if err != nil {
				for _, t := range targets {
					t.sp.ErrorCode = txn.Code(err)
				}
			}
		}
		resp.Markers = append(resp.Markers, sm)
	}
	return resp, nil
}
