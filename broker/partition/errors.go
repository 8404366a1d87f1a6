package partition

import "errors"

// ErrNotLeader is returned when this replica is not the partition's leader.
var ErrNotLeader = errors.New("partition: not the leader")

// ErrFencedLeaderEpoch is returned when a request carries an older leader
// epoch than this replica's.
var ErrFencedLeaderEpoch = errors.New("partition: fenced leader epoch")

// ErrUnknownLeaderEpoch is returned when a request carries a newer leader
// epoch than this replica knows.
var ErrUnknownLeaderEpoch = errors.New("partition: unknown leader epoch")

// ErrNotEnoughReplicas is returned when an append requires more in-sync
// replicas than the partition has (min.insync.replicas with acks=-1).
var ErrNotEnoughReplicas = errors.New("partition: not enough in-sync replicas")

// ErrClosed is returned after the partition was closed (its topic deleted).
var ErrClosed = errors.New("partition: closed")
