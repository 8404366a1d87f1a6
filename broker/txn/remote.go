package txn

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Peers sends the transaction coordinators' inter-broker requests to
// another node (coordinator.Peers). req has its version set.
type Peers interface {
	Request(ctx context.Context, node int32, req kmsg.Request) (kmsg.Response, error)
}

// SendMarkers sends one WriteTxnMarkers for tps, with the marker
// WriteMarkers describes, to their leader, node leader, and returns the
// partitions that failed. Kafka's TransactionMarkerRequestCompletionHandler
// gives up a partition answered INVALID_PRODUCER_EPOCH or
// TRANSACTION_COORDINATOR_FENCED (ErrMarkerFenced), and retries the others
// (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, timeouts, a
// coordinator still loading there, an unreachable node).
func SendMarkers(ctx context.Context, peers Peers, leader int32, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, txnVersion int16, tps []TopicPartition) map[TopicPartition]error {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.SetVersion(2)
	rm := kmsg.NewWriteTxnMarkersRequestMarker()
	rm.ProducerID, rm.ProducerEpoch, rm.Committed = producerID, producerEpoch, commit
	rm.CoordinatorEpoch, rm.TransactionVersion = coordinatorEpoch, int8(txnVersion)
	byTopic := make(map[string]int)
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			i = len(rm.Topics)
			byTopic[tp.Topic] = i
			rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			rt.Topic = tp.Topic
			rm.Topics = append(rm.Topics, rt)
		}
		rm.Topics[i].Partitions = append(rm.Topics[i].Partitions, tp.Partition)
	}
	req.Markers = append(req.Markers, rm)
	failed := make(map[TopicPartition]error, len(tps))
	for _, tp := range tps {
		failed[tp] = fmt.Errorf("marker for %s-%d: no answer from node %d", tp.Topic, tp.Partition, leader)
	}
	kresp, err := peers.Request(ctx, leader, req)
	if err != nil {
		for tp := range failed {
			failed[tp] = fmt.Errorf("marker for %s-%d: %w", tp.Topic, tp.Partition, err)
		}
		return failed
	}
	resp := kresp.(*kmsg.WriteTxnMarkersResponse)
	for _, sm := range resp.Markers {
		for _, st := range sm.Topics {
			for _, sp := range st.Partitions {
				tp := TopicPartition{Topic: st.Topic, Partition: sp.Partition}
				if _, ok := failed[tp]; !ok || sm.ProducerID != producerID {
					continue
				}
				switch code := sp.ErrorCode; code {
				case 0:
					delete(failed, tp)
				case kerr.InvalidProducerEpoch.Code, kerr.TransactionCoordinatorFenced.Code:
					failed[tp] = fmt.Errorf("marker for %s-%d on node %d: %w: %w", tp.Topic, tp.Partition, leader, ErrMarkerFenced, kerr.ErrorForCode(code))
				default:
					failed[tp] = fmt.Errorf("marker for %s-%d on node %d: %w", tp.Topic, tp.Partition, leader, kerr.ErrorForCode(code))
				}
			}
		}
	}
	return failed
}

// AddPartitionRemote sends one AddPartitionsToTxn (v4+) of tp for id to
// node coordinator and returns its answer as the coordinator's own error
// (RemoteError), so callers map it as they map a local one. An
// unreachable coordinator is ErrCoordinatorNotAvailable, which clients
// retry.
func AddPartitionRemote(ctx context.Context, peers Peers, coordinator int32, version int16, verifyOnly bool, id string, producerID int64, producerEpoch int16, tp TopicPartition) error {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(version)
	rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
	rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly = id, producerID, producerEpoch, verifyOnly
	rtt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	rtt.Topic, rtt.Partitions = tp.Topic, []int32{tp.Partition}
	rt.Topics = append(rt.Topics, rtt)
	req.Transactions = append(req.Transactions, rt)
	kresp, err := peers.Request(ctx, coordinator, req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCoordinatorNotAvailable, err)
	}
	resp := kresp.(*kmsg.AddPartitionsToTxnResponse)
	if resp.ErrorCode != 0 {
		return RemoteError(resp.ErrorCode)
	}
	for _, t := range resp.Transactions {
		for _, tt := range t.Topics {
			for _, p := range tt.Partitions {
				if t.TransactionalID == id && tt.Topic == tp.Topic && p.Partition == tp.Partition {
					return RemoteError(p.ErrorCode)
				}
			}
		}
	}
	return fmt.Errorf("AddPartitionsToTxn to node %d: no answer for %s-%d: %w", coordinator, tp.Topic, tp.Partition, ErrCoordinatorNotAvailable)
}

// RemoteError is the transaction coordinator's error for the code another
// node's coordinator answered, the inverse of Code; nil for 0.
func RemoteError(code int16) error {
	kind := map[int16]error{
		kerr.NotCoordinator.Code:            ErrNotCoordinator,
		kerr.CoordinatorLoadInProgress.Code: ErrLoadInProgress,
		kerr.CoordinatorNotAvailable.Code:   ErrCoordinatorNotAvailable,
		kerr.InvalidTxnState.Code:           ErrInvalidTxnState,
		kerr.ProducerFenced.Code:            ErrProducerFenced,
		kerr.InvalidProducerEpoch.Code:      ErrInvalidProducerEpoch,
		kerr.InvalidProducerIDMapping.Code:  ErrInvalidProducerIDMapping,
		kerr.ConcurrentTransactions.Code:    ErrConcurrentTransactions,
		kerr.RequestTimedOut.Code:           ErrTimedOut,
	}
	if code == 0 {
		return nil
	}
	if err, ok := kind[code]; ok {
		return fmt.Errorf("remote transaction coordinator: %w: %w", err, kerr.ErrorForCode(code))
	}
	return fmt.Errorf("remote transaction coordinator: %w", kerr.ErrorForCode(code))
}
