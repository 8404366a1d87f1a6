package broker

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/store/log"
)

var (
	// errDuplicateTopic answers, with INVALID_REQUEST, a topic named more
	// than once in one CreateTopics, CreatePartitions or DeleteTopics.
	errDuplicateTopic = errmsg.With(errors.New("duplicate topic name"), "Duplicate topic name.")
	// errDuplicateTopicID answers, with INVALID_REQUEST, a topic id named
	// more than once in one DeleteTopics.
	errDuplicateTopicID = errors.New("duplicate topic id")
	// errDuplicateResource answers, with INVALID_REQUEST, a config resource
	// named more than once in one AlterConfigs or IncrementalAlterConfigs.
	errDuplicateResource = errors.New("duplicate resource")
	// errDuplicatePartition answers, with INVALID_REQUEST, a partition named
	// more than once in one ListOffsets.
	errDuplicatePartition = errors.New("duplicate partition")
	// errInternalTopicReplicas: an internal topic is not created while
	// fewer brokers are active than its replication factor; FindCoordinator
	// answers COORDINATOR_NOT_AVAILABLE and the client retries.
	errInternalTopicReplicas = errors.New("waiting for enough brokers to create an internal topic")
)

// errorCode maps an error from klog's packages to the Kafka error code
// clients understand. Kafka error codes live only in the handlers; the
// packages below return their own sentinel errors.
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	var ioErr *log.IOError
	if errors.As(err, &ioErr) {
		// The log refuses appends after a write or fsync error.
		return kerr.KafkaStorageError.Code
	}
	for _, m := range errorCodes {
		if errors.Is(err, m.err) {
			return m.code.Code
		}
	}
	return kerr.UnknownServerError.Code
}

var errorCodes = []struct {
	err  error
	code *kerr.Error
}{
	{log.ErrCorruptMessage, kerr.CorruptMessage},
	{log.ErrOutOfOrderSequence, kerr.OutOfOrderSequenceNumber},
	{log.ErrInvalidProducerEpoch, kerr.InvalidProducerEpoch},
	{log.ErrInvalidTxnState, kerr.InvalidTxnState},
	{log.ErrTransactionCoordinatorFenced, kerr.TransactionCoordinatorFenced},
	{log.ErrInvalidRecord, kerr.InvalidRecord},
	{log.ErrMessageTooLarge, kerr.MessageTooLarge},
	{log.ErrInvalidTimestamp, kerr.InvalidTimestamp},
	{log.ErrOffsetOutOfRange, kerr.OffsetOutOfRange},
	{log.ErrCorrupt, kerr.KafkaStorageError},
	{log.ErrClosed, kerr.NotLeaderForPartition},
	{partition.ErrNotLeader, kerr.NotLeaderForPartition},
	{partition.ErrUnknownReplica, kerr.NotLeaderForPartition},
	{partition.ErrFencedLeaderEpoch, kerr.FencedLeaderEpoch},
	{partition.ErrUnknownLeaderEpoch, kerr.UnknownLeaderEpoch},
	{partition.ErrNotEnoughReplicas, kerr.NotEnoughReplicas},
	{partition.ErrClosed, kerr.NotLeaderForPartition},
	{partition.ErrDeletePolicy, kerr.PolicyViolation},
	{controller.ErrTopicExists, kerr.TopicAlreadyExists},
	{controller.ErrUnknownTopic, kerr.UnknownTopicOrPartition},
	{controller.ErrInvalidTopic, kerr.InvalidTopicException},
	{controller.ErrInvalidPartitions, kerr.InvalidPartitions},
	{controller.ErrInvalidReplicationFactor, kerr.InvalidReplicationFactor},
	{controller.ErrInvalidConfig, kerr.InvalidConfig},
	{controller.ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment},
	{controller.ErrInvalidRequest, kerr.InvalidRequest},
	{controller.ErrPolicyViolation, kerr.PolicyViolation},
	{controller.ErrTopicDeletionDisabled, kerr.TopicDeletionDisabled},
	{controller.ErrElectionNotNeeded, kerr.ElectionNotNeeded},
	{controller.ErrNoReassignment, kerr.NoReassignmentInProgress},
	{controller.ErrPreferredLeaderNotAvailable, kerr.PreferredLeaderNotAvailable},
	{controller.ErrEligibleLeadersNotAvailable, kerr.EligibleLeadersNotAvailable},
	{controller.ErrFencedLeaderEpoch, kerr.FencedLeaderEpoch},
	{controller.ErrInvalidUpdateVersion, kerr.InvalidUpdateVersion},
	{controller.ErrIneligibleReplica, kerr.IneligibleReplica},
	{controller.ErrNewLeaderElected, kerr.NewLeaderElected},
	{controller.ErrUnsupportedSASLMechanism, kerr.UnsupportedSaslMechanism},
	{controller.ErrUnacceptableCredential, kerr.UnacceptableCredential},
	{controller.ErrResourceNotFound, kerr.ResourceNotFound},
	{controller.ErrDuplicateResource, kerr.DuplicateResource},
	{controller.ErrNotController, kerr.NotController},
	{controller.ErrDelegationTokenDisabled, kerr.DelegationTokenAuthDisabled},
	{controller.ErrDelegationTokenNotFound, kerr.DelegationTokenNotFound},
	{controller.ErrDelegationTokenExpired, kerr.DelegationTokenExpired},
	{controller.ErrDelegationTokenOwnerMismatch, kerr.DelegationTokenOwnerMismatch},
	{controller.ErrClosed, kerr.NotController},
	{controller.ErrUnknownBroker, kerr.BrokerIDNotRegistered},
	{auth.ErrInvalidACL, kerr.InvalidRequest},
	{errDuplicateTopic, kerr.InvalidRequest},
	{errDuplicateTopicID, kerr.InvalidRequest},
	{errDuplicateResource, kerr.InvalidRequest},
	{errDuplicatePartition, kerr.InvalidRequest},
}

// errorMessage is the message sent with an error code where the protocol
// has room for one: the words Kafka sends with it where klog's packages
// attached them (errmsg.With), else Kafka's default message for a bare
// Kafka error code (as ApiError.messageWithFallback), else klog's own
// error text.
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	if msg, ok := errmsg.Wire(err); ok {
		if msg == "" {
			return nil
		}
		return &msg
	}
	if ke, ok := err.(*kerr.Error); ok {
		s := ke.Description
		return &s
	}
	s := err.Error()
	return &s
}

// leaderPartition is the local replica leading partition index of topic in
// img, or the Kafka error a handler answers for that partition without
// one: UNKNOWN_TOPIC_OR_PARTITION when img has no such topic or the index
// is outside it, NOT_LEADER_OR_FOLLOWER when this node has no replica of
// the partition or its replica does not lead.
// localReplica is this node's replica of a partition, leading or not: nil
// with UNKNOWN_TOPIC_OR_PARTITION when img has no such partition, or
// NOT_LEADER_OR_FOLLOWER when the node hosts no replica of it. The
// callers check the client's leader epoch and then leadership, in the
// order of Kafka's Partition.getLocalLog.
func (n *Node) localReplica(img *metadata.Image, topic string, index int32) (*partition.Partition, *kerr.Error) {
	t, ok := img.Topic(topic)
	if !ok || index < 0 || int(index) >= len(t.Partitions) {
		return nil, kerr.UnknownTopicOrPartition
	}
	if p := n.partition(topic, index); p != nil {
		return p, nil
	}
	return nil, kerr.NotLeaderForPartition
}

func (n *Node) leaderPartition(img *metadata.Image, topic string, index int32) (*partition.Partition, *kerr.Error) {
	t, ok := img.Topic(topic)
	if !ok || index < 0 || int(index) >= len(t.Partitions) {
		return nil, kerr.UnknownTopicOrPartition
	}
	p := n.partition(topic, index)
	if p == nil || !p.IsLeader() {
		return nil, kerr.NotLeaderForPartition
	}
	return p, nil
}
