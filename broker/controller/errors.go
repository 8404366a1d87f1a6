package controller

import (
	"errors"

	"github.com/klogdev/klog/broker/metadata"
)

// ErrTopicExists is returned when creating a topic whose name is taken.
var ErrTopicExists = metadata.ErrTopicExists

// ErrUnknownTopic is returned for an operation on a topic that does not
// exist.
var ErrUnknownTopic = metadata.ErrUnknownTopic

// ErrInvalidTopic is returned for a topic name that breaks the naming rules
// or collides with an existing topic.
var ErrInvalidTopic = metadata.ErrInvalidTopic

// ErrTopicCollision is returned, together with ErrInvalidTopic, for a name
// that differs from an existing topic's only by '.' versus '_'.
var ErrTopicCollision = metadata.ErrTopicCollision

// ErrInvalidPartitions is returned for a partition count that is not
// positive, too large, or not larger than the current one.
var ErrInvalidPartitions = errors.New("invalid partition count")

// ErrInvalidReplicationFactor is returned for a replication factor that is
// not positive or larger than the number of available brokers.
var ErrInvalidReplicationFactor = errors.New("invalid replication factor")

// ErrInvalidReplicaAssignment is returned for a manual assignment that skips
// or repeats partitions, repeats or names unknown brokers, mixes replica
// counts, names only fenced brokers for a partition, or does not give one
// entry per new partition.
var ErrInvalidReplicaAssignment = errors.New("invalid replica assignment")

// ErrInvalidRequest is returned for a request whose fields contradict each
// other (an assignment together with a partition count).
var ErrInvalidRequest = errors.New("invalid request")

// ErrPolicyViolation is returned for a valid request that klog's rules
// refuse: partitions past klog.max.partitions on a node, or a new
// partition count for an internal topic.
var ErrPolicyViolation = errors.New("policy violation")

// ErrInvalidConfig is returned for an unknown config name or a bad value;
// it wraps the message from broker/config.
var ErrInvalidConfig = errors.New("invalid config")

// ErrTopicDeletionDisabled is returned by DeleteTopic when
// delete.topic.enable is false.
var ErrTopicDeletionDisabled = errors.New("topic deletion is disabled")

// ErrUnknownBroker is returned for a broker id no broker registered.
var ErrUnknownBroker = metadata.ErrUnknownBroker

// ErrNotController is returned when this node is not the active controller
// and so cannot change the metadata.
var ErrNotController = errors.New("not the active controller")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("controller closed")

// ErrElectionNotNeeded is returned by ElectLeader when the partition
// already has the leader the election would give it
// (ELECTION_NOT_NEEDED).
var ErrElectionNotNeeded = errors.New("leader election not needed")

// ErrPreferredLeaderNotAvailable is returned by a preferred ElectLeader
// when the preferred replica is fenced or out of the ISR
// (PREFERRED_LEADER_NOT_AVAILABLE).
var ErrPreferredLeaderNotAvailable = errors.New("preferred leader not available")

// ErrEligibleLeadersNotAvailable is returned by an unclean ElectLeader
// when no replica is eligible (ELIGIBLE_LEADERS_NOT_AVAILABLE).
var ErrEligibleLeadersNotAvailable = errors.New("eligible leaders not available")

// ErrFencedLeaderEpoch is returned by AlterPartition for a leader epoch
// that is not the partition's (FENCED_LEADER_EPOCH).
var ErrFencedLeaderEpoch = errors.New("fenced leader epoch")

// ErrInvalidUpdateVersion is returned by AlterPartition for a partition
// epoch that is not the partition's (INVALID_UPDATE_VERSION).
var ErrInvalidUpdateVersion = errors.New("invalid update version")

// ErrIneligibleReplica is returned by AlterPartition for an ISR naming a
// broker that is not registered or is fenced (INELIGIBLE_REPLICA).
var ErrIneligibleReplica = errors.New("ineligible replica")

// ErrNewLeaderElected is returned by AlterPartition when the ISR it
// committed left out the leader, so another was elected
// (NEW_LEADER_ELECTED); the returned partition state is the new one.
var ErrNewLeaderElected = errors.New("new leader elected")

// ErrNoReassignment is returned for cancelling the reassignment of a
// partition that has none under way (Kafka's NO_REASSIGNMENT_IN_PROGRESS).
var ErrNoReassignment = errors.New("no partition reassignment in progress")

// ErrStoreDamaged is returned by New when the Raft store file,
// <data-dir>/raft/raft.db, cannot be opened safely: shorter than the pages
// its own header says it holds (a truncated copy), or with no valid
// header. Opening such a file would read past its end and crash the
// process.
var ErrStoreDamaged = errors.New("metadata store damaged")

// ErrDelegationTokenDisabled is returned when delegation.token.secret.key
// is not set.
var ErrDelegationTokenDisabled = errors.New("delegation tokens are disabled")

// ErrDelegationTokenNotFound is returned for an HMAC of no token.
var ErrDelegationTokenNotFound = errors.New("delegation token not found")

// ErrDelegationTokenExpired is returned for the renewal or expiry of a
// token that lapsed.
var ErrDelegationTokenExpired = errors.New("delegation token expired")

// ErrDelegationTokenOwnerMismatch is returned for the renewal or expiry
// of a token by a principal that neither owns it nor may renew it.
var ErrDelegationTokenOwnerMismatch = errors.New("delegation token owner mismatch")
