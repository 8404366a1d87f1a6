package coordinator

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrClosed is returned by Load once the runtime has been closed.
var ErrClosed = errors.New("coordinator: closed")

// ErrNotLoaded is returned by Load when the partition was unloaded, or the
// runtime closed, while it was being replayed.
var ErrNotLoaded = errors.New("coordinator: partition unloaded during load")

// ErrNotAvailable answers a request after Close, and what a user wraps
// when it could not persist a change (COORDINATOR_NOT_AVAILABLE, which
// clients retry).
var ErrNotAvailable = errors.New("coordinator: not available")

// ErrNotCoordinator means this node does not serve the key's partition of
// the internal topic, or the key's actor stopped (NOT_COORDINATOR: clients
// look the coordinator up again).
var ErrNotCoordinator = errors.New("coordinator: not the coordinator of the key")

// ErrLoadInProgress means the key's partition is still being replayed
// (COORDINATOR_LOAD_IN_PROGRESS).
var ErrLoadInProgress = errors.New("coordinator: load in progress")

// ErrTimedOut means a request gave up waiting for the key's actor
// (REQUEST_TIMED_OUT).
var ErrTimedOut = errors.New("coordinator: request timed out")

// ErrUnknownKey is returned by Run for a key without an actor when none is
// to be created; the event did not run.
var ErrUnknownKey = errors.New("coordinator: unknown key")

// ErrNotLeader is what a Store wraps when this node no longer leads the
// internal topic partition it was asked to append to or replay; requests
// then answer NOT_COORDINATOR so clients find the new coordinator.
var ErrNotLeader = errors.New("coordinator: not the leader of the internal topic partition")

// Code maps an error of the runtime to its Kafka error code: 0 for nil,
// COORDINATOR_NOT_AVAILABLE for an error it does not know.
func Code(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotCoordinator), LostLeadership(err):
		return kerr.NotCoordinator.Code
	case errors.Is(err, ErrLoadInProgress):
		return kerr.CoordinatorLoadInProgress.Code
	case errors.Is(err, ErrTimedOut):
		return kerr.RequestTimedOut.Code
	default:
		return kerr.CoordinatorNotAvailable.Code
	}
}

// LostLeadership reports a write that failed because this node no longer
// coordinates the key: the partition moved (ErrNotLeader) or the key's
// actor was stopped mid-write (its context canceled). Clients are told
// NOT_COORDINATOR; any other write error is COORDINATOR_NOT_AVAILABLE.
func LostLeadership(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, ErrNotLeader)
}
