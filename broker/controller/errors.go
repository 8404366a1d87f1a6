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
// partitions, repeats or names unknown brokers, or mixes replica counts.
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

// ErrNotController is returned when this node is not the active controller
// and so cannot change the metadata.
var ErrNotController = errors.New("not the active controller")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("controller closed")
