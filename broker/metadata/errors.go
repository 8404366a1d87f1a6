package metadata

import "errors"

// ErrMalformedRecord is returned by Decode and DecodeImage for bytes that
// are not a valid record or image encoding.
var ErrMalformedRecord = errors.New("malformed metadata record")

// ErrUnknownRecordType is returned by Decode for a record type this node
// does not know.
var ErrUnknownRecordType = errors.New("unknown metadata record type")

// ErrUnsupportedVersion is returned by Decode for a payload version newer
// than this node knows.
var ErrUnsupportedVersion = errors.New("unsupported metadata record version")

// ErrInvalidRecord is returned by Apply for a record that is structurally
// invalid or inconsistent with the image (a missing payload, a bad
// partition layout, an unknown broker in an assignment).
var ErrInvalidRecord = errors.New("invalid metadata record")

// ErrTopicExists is returned by Apply when creating a topic whose name or ID
// is already in use.
var ErrTopicExists = errors.New("topic already exists")

// ErrUnknownTopic is returned by Apply for a record naming a topic that does
// not exist (or whose ID no longer matches).
var ErrUnknownTopic = errors.New("unknown topic")

// ErrInvalidTopic is returned for a topic name that breaks the naming rules.
var ErrInvalidTopic = errors.New("invalid topic name")

// ErrTopicCollision is returned for a topic name that differs from an
// existing one only by '.' versus '_'. Errors carrying it also match
// ErrInvalidTopic.
var ErrTopicCollision = errors.New("topic name collides with an existing topic")

// ErrClusterIDSet is returned when setting a cluster ID different from the
// one already set; the cluster ID never changes.
var ErrClusterIDSet = errors.New("cluster id already set")

// ErrProducerIDsExhausted is returned when a producer-ID block would pass
// the largest producer ID.
var ErrProducerIDsExhausted = errors.New("producer ids exhausted")

// ErrStaleLeaderEpoch is returned by Apply for a partition change whose
// IfLeaderEpoch is no longer the partition's leader epoch.
var ErrStaleLeaderEpoch = errors.New("stale leader epoch")

// ErrStalePartitionEpoch is returned by Apply for a partition change whose
// IfPartitionEpoch is no longer the partition's epoch.
var ErrStalePartitionEpoch = errors.New("stale partition epoch")

// ErrStaleIncarnation is returned by Apply for a broker registration whose
// IfIncarnation is no longer the registered incarnation, or an
// unregistration of another incarnation: a change computed for a run of
// the broker that has since been replaced.
var ErrStaleIncarnation = errors.New("stale broker incarnation")

// ErrUnknownBroker is returned by Apply for the unregistration of a
// broker the image does not hold.
var ErrUnknownBroker = errors.New("unknown broker")

// ErrUnknownSCRAMCredential is returned by Apply for the deletion of a
// SCRAM credential the image does not hold.
var ErrUnknownSCRAMCredential = errors.New("unknown SCRAM credential")

// ErrUnknownDelegationToken is returned by Apply for a renewal, expiry or
// removal of a delegation token the image does not hold.
var ErrUnknownDelegationToken = errors.New("unknown delegation token")
