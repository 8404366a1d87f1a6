package txn

import (
	"context"
	"errors"
	"fmt"
)

// retryMarkers logs the partitions of one WriteMarkers call that failed
// and returns those to retry. A fenced partition is given up: a newer
// producer or coordinator epoch wrote there, and no retry of this marker
// can ever succeed. Kafka's coordinator stops sending the transaction's
// markers then and leaves it pending until the partition is loaded again
// (TransactionMarkerRequestCompletionHandler); on one node no other
// coordinator exists to finish it, so klog completes it once every other
// partition has its marker, and the transactional id is free again.
func (a *actor) retryMarkers(pid int64, epoch int16, commit bool, tps []TopicPartition, failed map[TopicPartition]error) []TopicPartition {
	var retry []TopicPartition
	for _, tp := range tps {
		err, ok := failed[tp]
		switch {
		case !ok:
		case errors.Is(err, ErrMarkerFenced):
			a.c.log.Error("transaction marker fenced; not retrying it", "transactional_id", a.id, "producer_id", pid,
				"epoch", epoch, "commit", commit, "coordinator_epoch", a.epoch, "topic", tp.Topic, "partition", tp.Partition, "err", err)
		default:
			a.c.log.Warn("writing transaction marker failed; retrying", "transactional_id", a.id, "producer_id", pid,
				"epoch", epoch, "commit", commit, "topic", tp.Topic, "partition", tp.Partition, "err", err)
			retry = append(retry, tp)
		}
	}
	return retry
}

// ClientMarker decides a marker that a client sent in WriteTxnMarkers, as
// an operator ending a hanging transaction does (Kafka's Admin
// abortTransaction). Kafka lets any principal with CLUSTER_ACTION (every
// one, without an authorizer) write any marker, which lets a client end
// another producer's transaction behind its coordinator: the producer is
// then told its commit succeeded while its records stay aborted, and a
// coordinator epoch from the future fences the coordinator for good. klog
// has no inter-broker listener, so it keeps the coordinator's promises
// instead:
//
//   - a coordinator epoch above that of the producer's coordinator (or,
//     for a producer no transactional id here has, above clusterEpoch and
//     every coordinator epoch here) is refused with
//     ErrClusterAuthorizationFailed: only a coordinator writes at its
//     epoch. clusterEpoch is the highest epoch any coordinator of the
//     cluster can hold (the highest leader epoch of __transaction_state),
//     so the markers another node's coordinator sends are written;
//   - a transaction this coordinator runs is ended by the coordinator
//     only: an abort of an Ongoing one aborts it with a bumped epoch, as a
//     timeout does, so the producer is fenced rather than told it
//     committed; a marker that agrees with a transaction already ending
//     is nil; any other is ErrInvalidTxnState, and a producer epoch other
//     than the coordinator's is ErrInvalidProducerEpoch;
//   - otherwise (no transaction in flight, or a producer id no
//     transactional id has) write is called to append the marker as sent,
//     on the id's actor, so no transaction of the id starts meanwhile.
//
// While a __transaction_state partition loads it answers ErrLoadInProgress.
func (c *Coordinator) ClientMarker(ctx context.Context, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch, clusterEpoch int32, write func()) error {
	c.rt.Lock()
	highest, err := c.rt.AllServedLocked()
	if err != nil {
		c.rt.Unlock()
		if errors.Is(err, ErrLoadInProgress) {
			return fmt.Errorf("marker for producer %d: %w", producerID, err)
		}
		return err
	}
	highest = max(highest, clusterEpoch)
	a := c.byProducer[producerID]
	c.rt.Unlock()
	if a == nil {
		if coordinatorEpoch > highest {
			return fmt.Errorf("marker for producer %d at coordinator epoch %d, above %d: %w", producerID, coordinatorEpoch, highest, ErrClusterAuthorizationFailed)
		}
		write()
		return nil
	}
	if serr := a.send(ctx, func(a *actor) {
		err = a.clientMarker(producerID, producerEpoch, commit, coordinatorEpoch, write)
	}); serr != nil {
		return serr
	}
	return err
}

func (a *actor) clientMarker(pid int64, epoch int16, commit bool, coordinatorEpoch int32, write func()) error {
	m := a.m
	switch {
	case m.producerID != pid:
		// The id moved to a new producer id since the lookup.
		return fmt.Errorf("marker for producer %d of %q, now producer %d: %w", pid, a.id, m.producerID, ErrConcurrentTransactions)
	case coordinatorEpoch > a.epoch:
		return fmt.Errorf("marker for producer %d of %q at coordinator epoch %d, above %d: %w", pid, a.id, coordinatorEpoch, a.epoch, ErrClusterAuthorizationFailed)
	case epoch != m.epoch:
		return fmt.Errorf("marker for producer %d of %q at epoch %d, coordinator has %d: %w", pid, a.id, epoch, m.epoch, ErrInvalidProducerEpoch)
	}
	wrong := fmt.Errorf("marker (commit=%v) for producer %d of %q in %s: %w", commit, pid, a.id, m.state, ErrInvalidTxnState)
	switch m.state {
	case StateOngoing:
		if commit {
			return wrong
		}
		a.c.log.Warn("aborting transaction on a client's WriteTxnMarkers", "transactional_id", a.id, "producer_id", pid, "epoch", epoch)
		return a.abortFenced()
	case StatePrepareCommit, StatePrepareAbort:
		if commit != (m.state == StatePrepareCommit) {
			return wrong
		}
		return nil // the coordinator is writing this very marker
	default:
		write()
		return nil
	}
}
