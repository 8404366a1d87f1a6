package partition

import (
	"errors"
	"fmt"
)

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

// ErrNotFollower is returned when a follower's operation (appending
// replicated batches, taking the leader's high watermark) reaches the
// leader.
var ErrNotFollower = errors.New("partition: not a follower")

// ErrUnknownReplica is returned when a fetch names a replica that is not
// assigned to the partition.
var ErrUnknownReplica = errors.New("partition: unknown replica")

// ErrHighWatermarkUnknown is returned when a consumer reads from a
// follower (KIP-392) that has not yet learned its high watermark from the
// leader since it opened its log, whose high watermark is then only its
// log end: the consumer is sent back to the leader (it is an
// ErrNotLeader).
var ErrHighWatermarkUnknown = fmt.Errorf("%w: a follower's high watermark is not yet known from the leader", ErrNotLeader)

// ErrDeletePolicy is returned when DeleteRecords reaches a partition whose
// cleanup.policy does not include delete (compact only).
var ErrDeletePolicy = errors.New("partition: records can not be deleted due to the configured policy")
