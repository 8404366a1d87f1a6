package txn

import (
	"errors"

	"github.com/klogdev/klog/broker/coordinator"
)

// ErrClosed is returned by LoadPartition when the coordinator has been
// closed.
var ErrClosed = coordinator.ErrClosed

// ErrNotLoaded is returned by LoadPartition when the partition was unloaded
// while it was being replayed.
var ErrNotLoaded = coordinator.ErrNotLoaded

// ErrBadRecord is returned when a __transaction_state record cannot be
// decoded.
var ErrBadRecord = errors.New("txn: undecodable __transaction_state record")

// ErrNotLeader is what a Store wraps when this node no longer leads the
// __transaction_state partition it was asked to append to; requests then
// answer NOT_COORDINATOR. Other append errors answer
// COORDINATOR_NOT_AVAILABLE (retriable).
var ErrNotLeader = coordinator.ErrNotLeader

// ErrNotCoordinator means this node does not serve the transactional id's
// __transaction_state partition (NOT_COORDINATOR).
var ErrNotCoordinator = coordinator.ErrNotCoordinator

// ErrLoadInProgress means the transactional id's partition is still being
// replayed (COORDINATOR_LOAD_IN_PROGRESS).
var ErrLoadInProgress = coordinator.ErrLoadInProgress

// ErrCoordinatorNotAvailable means the coordinator is closed or could not
// persist a change (COORDINATOR_NOT_AVAILABLE).
var ErrCoordinatorNotAvailable = coordinator.ErrNotAvailable

// ErrInvalidTxnState means the transaction is not in a state that allows the
// operation, e.g. a produce to a partition that is not part of the ongoing
// transaction (INVALID_TXN_STATE).
var ErrInvalidTxnState = errors.New("txn: invalid transaction state")

// ErrProducerFenced means a newer producer with the same transactional id
// has bumped the epoch (PRODUCER_FENCED).
var ErrProducerFenced = errors.New("txn: producer fenced")

// ErrInvalidProducerEpoch means the producer epoch is not the current one
// (INVALID_PRODUCER_EPOCH).
var ErrInvalidProducerEpoch = errors.New("txn: invalid producer epoch")

// ErrInvalidProducerIDMapping means the producer id is not the one the
// transactional id maps to, or the transactional id is unknown
// (INVALID_PRODUCER_ID_MAPPING).
var ErrInvalidProducerIDMapping = errors.New("txn: invalid producer id mapping")

// ErrConcurrentTransactions means markers of the previous transaction are
// still being written (CONCURRENT_TRANSACTIONS).
var ErrConcurrentTransactions = errors.New("txn: concurrent transactions")

// ErrTimedOut means the request gave up waiting for the transactional id's
// actor (REQUEST_TIMED_OUT).
var ErrTimedOut = coordinator.ErrTimedOut

// ErrClusterAuthorizationFailed means a client sent a transaction marker
// only a coordinator may send: one at a coordinator epoch above that of
// the producer's coordinator (CLUSTER_AUTHORIZATION_FAILED, Kafka's answer
// to WriteTxnMarkers without CLUSTER_ACTION).
var ErrClusterAuthorizationFailed = errors.New("txn: marker claims a coordinator epoch the client does not hold")

// ErrMarkerFenced is what Markers wraps for a partition that refused a
// marker for good: it holds a newer producer epoch or coordinator epoch of
// the producer (Kafka: INVALID_PRODUCER_EPOCH,
// TRANSACTION_COORDINATOR_FENCED). The coordinator does not retry it.
var ErrMarkerFenced = errors.New("txn: transaction marker fenced by the partition")
