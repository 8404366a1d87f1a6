package group

import (
	"errors"

	"github.com/klogdev/klog/broker/coordinator"
)

// ErrClosed is returned by LoadPartition when the coordinator has been
// closed.
var ErrClosed = coordinator.ErrClosed

// ErrBadRecord is returned when a __consumer_offsets record cannot be decoded.
var ErrBadRecord = errors.New("group: undecodable __consumer_offsets record")

// ErrNotLoaded is returned by LoadPartition when the partition was unloaded
// while it was being replayed.
var ErrNotLoaded = coordinator.ErrNotLoaded

// ErrNotLeader is what a Store wraps when this node no longer leads the
// __consumer_offsets partition it was asked to append to; requests then
// answer NOT_COORDINATOR so clients find the new coordinator. Other append
// errors answer COORDINATOR_NOT_AVAILABLE (retriable).
var ErrNotLeader = coordinator.ErrNotLeader
