package broker

// WriteTxnMarkers (key 27), versions 0-1.
//
// Writes commit or abort markers for producers to partitions this node
// leads: the request a transaction coordinator sends partition leaders, and
// the one operators send to end a hanging transaction (klog txn abort).
// A marker in __consumer_offsets also completes the producer's
// transactional offset commits there.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/store/log"
)

func handleWriteTxnMarkers(n *Node, _ context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.WriteTxnMarkersRequest)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	img := n.ctrl.Image()
	for _, m := range req.Markers {
		sm := kmsg.NewWriteTxnMarkersResponseMarker()
		sm.ProducerID = m.ProducerID
		for _, rt := range m.Topics {
			st := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			st.Topic = rt.Topic
			for _, index := range rt.Partitions {
				sp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				sp.Partition = index
				p, perr := n.leaderPartition(img, rt.Topic, index)
				switch {
				case perr != nil:
					sp.ErrorCode = perr.Code
				default:
					_, err := p.AppendMarker(log.Marker{
						ProducerID:       m.ProducerID,
						ProducerEpoch:    m.ProducerEpoch,
						Commit:           m.Committed,
						CoordinatorEpoch: m.CoordinatorEpoch,
					})
					if err != nil {
						sp.ErrorCode = errorCode(err)
					} else if rt.Topic == offsetsTopic {
						n.groups.CompleteTransaction(index, m.ProducerID, m.Committed)
					}
				}
				st.Partitions = append(st.Partitions, sp)
			}
			sm.Topics = append(sm.Topics, st)
		}
		resp.Markers = append(resp.Markers, sm)
	}
	return resp, nil
}
