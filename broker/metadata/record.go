package metadata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// RecordType names the kind of a metadata record.
type RecordType uint8

// Record types. The numbers are for in-memory use only; the encoding names
// types by string.
const (
	RecordUnknown RecordType = iota
	RecordSetClusterID
	RecordRegisterBroker
	RecordSetController
	RecordCreateTopic
	RecordDeleteTopic
	RecordCreatePartitions
	RecordAlterTopicConfigs
	RecordAllocateProducerIDs
	RecordPartitionChange
)

var recordTypeNames = [...]string{
	RecordUnknown:             "Unknown",
	RecordSetClusterID:        "SetClusterID",
	RecordRegisterBroker:      "RegisterBroker",
	RecordSetController:       "SetController",
	RecordCreateTopic:         "CreateTopic",
	RecordDeleteTopic:         "DeleteTopic",
	RecordCreatePartitions:    "CreatePartitions",
	RecordAlterTopicConfigs:   "AlterTopicConfigs",
	RecordAllocateProducerIDs: "AllocateProducerIDs",
	RecordPartitionChange:     "PartitionChange",
}

// String returns the type's name as written in the encoding.
func (t RecordType) String() string {
	if int(t) < len(recordTypeNames) {
		return recordTypeNames[t]
	}
	return fmt.Sprintf("RecordType(%d)", uint8(t))
}

func recordTypeByName(name string) (RecordType, bool) {
	for i, n := range recordTypeNames {
		if n == name && RecordType(i) != RecordUnknown {
			return RecordType(i), true
		}
	}
	return RecordUnknown, false
}

// Record is one change to the metadata. Type selects which payload field is
// set; the others are nil.
type Record struct {
	Type                RecordType
	SetClusterID        *SetClusterIDRecord
	RegisterBroker      *RegisterBrokerRecord
	SetController       *SetControllerRecord
	CreateTopic         *CreateTopicRecord
	DeleteTopic         *DeleteTopicRecord
	CreatePartitions    *CreatePartitionsRecord
	AlterTopicConfigs   *AlterTopicConfigsRecord
	AllocateProducerIDs *AllocateProducerIDsRecord
	PartitionChange     *PartitionChangeRecord
}

// SetClusterIDRecord sets the cluster ID, once. The cluster-wide dynamic
// broker configs in BrokerDefaults are set with it, the first time only:
// the configs a new cluster starts with, as Kafka's storage format writes
// min.insync.replicas.
type SetClusterIDRecord struct {
	ClusterID      string            `json:"clusterID"`
	BrokerDefaults map[string]string `json:"brokerDefaults,omitempty"`
}

// RegisterBrokerRecord adds or replaces a broker's registration. Without
// IfIncarnation it is a registration: a first one is applied as it says,
// one of a new incarnation fenced (Broker), one of the registered
// incarnation keeps its Fenced and ShuttingDown. With IfIncarnation, the
// broker's incarnation, it is an amendment that fences, unfences or shuts
// down that run, applied as it says only while that incarnation is the
// registered one, so that it never replaces the registration of the next.
type RegisterBrokerRecord struct {
	Broker        Broker `json:"broker"`
	IfIncarnation *UUID  `json:"ifIncarnation,omitempty"`
}

// SetControllerRecord records which node is the active controller.
type SetControllerRecord struct {
	ID int32 `json:"id"`
}

// CreateTopicRecord creates a topic with its partitions, replica
// assignment and config overrides. The ID is chosen by the proposer so that
// applying the record is deterministic.
type CreateTopicRecord struct {
	Name       string            `json:"name"`
	ID         UUID              `json:"id"`
	Partitions []Partition       `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
	Internal   bool              `json:"internal,omitempty"`
}

// DeleteTopicRecord deletes a topic. A non-zero ID must match the topic's.
type DeleteTopicRecord struct {
	Name string `json:"name"`
	ID   UUID   `json:"id"`
}

// CreatePartitionsRecord appends partitions to a topic. Their indexes must
// continue the topic's existing ones.
type CreatePartitionsRecord struct {
	Topic      string      `json:"topic"`
	ID         UUID        `json:"id"`
	Partitions []Partition `json:"partitions"`
}

// AlterTopicConfigsRecord changes a topic's config overrides or, with
// Broker set, the dynamic configs of a broker resource (Kafka's
// ConfigRecord of resource type BROKER): a node id, or "" for the
// cluster-wide default. With Replace the configs become exactly Set;
// otherwise Set keys are set and Delete keys removed.
type AlterTopicConfigsRecord struct {
	Topic string `json:"topic"`
	ID    UUID   `json:"id"`
	// Broker names the broker resource when the record changes one;
	// Topic is then "" and ID zero.
	Broker  *string           `json:"broker,omitempty"`
	Replace bool              `json:"replace,omitempty"`
	Set     map[string]string `json:"set,omitempty"`
	Delete  []string          `json:"delete,omitempty"`
}

// AllocateProducerIDsRecord hands out the block [NextProducerID,
// NextProducerID+BlockSize).
type AllocateProducerIDsRecord struct {
	BlockSize int64 `json:"blockSize"`
}

// PartitionChangeRecord changes a partition's leader, ISR or replicas; nil
// fields are unchanged. A leader change bumps the leader epoch; any change
// bumps the partition epoch (Kafka's PartitionChangeRecord semantics).
//
// IfLeaderEpoch and IfPartitionEpoch, when set, are preconditions: the
// record is rejected (ErrStaleLeaderEpoch, ErrStalePartitionEpoch) unless
// the partition still has those epochs when it is applied. Kafka's
// controller needs none, being one thread that checks and commits; klog's
// proposers check against the image they see, which the log may have
// moved past by the time the record commits, so the state machine checks
// again.
type PartitionChangeRecord struct {
	Topic     string  `json:"topic"`
	ID        UUID    `json:"id"`
	Partition int32   `json:"partition"`
	Leader    *int32  `json:"leader,omitempty"`
	ISR       []int32 `json:"isr"`      // null: unchanged; []: empty
	Replicas  []int32 `json:"replicas"` // null: unchanged
	// AddingReplicas and RemovingReplicas set the reassignment's (null:
	// unchanged; []: none, the reassignment is over or cancelled).
	AddingReplicas   []int32 `json:"addingReplicas"`
	RemovingReplicas []int32 `json:"removingReplicas"`
	// BumpLeaderEpoch bumps the leader epoch even when the leader stays,
	// as Kafka does when replicas leave the partition: their fetches at
	// the old epoch are then fenced.
	BumpLeaderEpoch  bool   `json:"bumpLeaderEpoch,omitempty"`
	IfLeaderEpoch    *int32 `json:"ifLeaderEpoch,omitempty"`
	IfPartitionEpoch *int32 `json:"ifPartitionEpoch,omitempty"`
}

// recordVersion is the current payload version of every record type.
const recordVersion = 1

// maxRecordBytes bounds the size of an encoded record Decode accepts.
const maxRecordBytes = 64 << 20

type envelope struct {
	V    int             `json:"v"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// payload returns the record's payload, or an error if it is missing.
func (r Record) payload() (any, error) {
	var p any
	switch r.Type {
	case RecordSetClusterID:
		p = nonNil(r.SetClusterID)
	case RecordRegisterBroker:
		p = nonNil(r.RegisterBroker)
	case RecordSetController:
		p = nonNil(r.SetController)
	case RecordCreateTopic:
		p = nonNil(r.CreateTopic)
	case RecordDeleteTopic:
		p = nonNil(r.DeleteTopic)
	case RecordCreatePartitions:
		p = nonNil(r.CreatePartitions)
	case RecordAlterTopicConfigs:
		p = nonNil(r.AlterTopicConfigs)
	case RecordAllocateProducerIDs:
		p = nonNil(r.AllocateProducerIDs)
	case RecordPartitionChange:
		p = nonNil(r.PartitionChange)
	default:
		return nil, fmt.Errorf("%w: %v", ErrUnknownRecordType, r.Type)
	}
	if p == nil {
		return nil, fmt.Errorf("%w: %v record without payload", ErrInvalidRecord, r.Type)
	}
	return p, nil
}

// nonNil returns p as an any, or an untyped nil when p is nil.
func nonNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

// Encode encodes a record (see the package doc for the layout).
func Encode(r Record) ([]byte, error) {
	p, err := r.payload()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode %v record: %w", r.Type, err)
	}
	return json.Marshal(envelope{V: recordVersion, Type: r.Type.String(), Data: data})
}

// Decode decodes a record. Unknown types, newer versions, unknown fields
// and trailing bytes are errors.
func Decode(b []byte) (Record, error) {
	if len(b) > maxRecordBytes {
		return Record{}, fmt.Errorf("%w: %d bytes, more than %d", ErrMalformedRecord, len(b), maxRecordBytes)
	}
	var env envelope
	if err := strictUnmarshal(b, &env); err != nil {
		return Record{}, fmt.Errorf("%w: envelope: %v", ErrMalformedRecord, err)
	}
	t, ok := recordTypeByName(env.Type)
	if !ok {
		return Record{}, fmt.Errorf("%w: %q", ErrUnknownRecordType, env.Type)
	}
	if env.V < 1 || env.V > recordVersion {
		return Record{}, fmt.Errorf("%w: %s v%d", ErrUnsupportedVersion, env.Type, env.V)
	}
	r := Record{Type: t}
	var dst any
	switch t {
	case RecordSetClusterID:
		r.SetClusterID = new(SetClusterIDRecord)
		dst = r.SetClusterID
	case RecordRegisterBroker:
		r.RegisterBroker = new(RegisterBrokerRecord)
		dst = r.RegisterBroker
	case RecordSetController:
		r.SetController = new(SetControllerRecord)
		dst = r.SetController
	case RecordCreateTopic:
		r.CreateTopic = new(CreateTopicRecord)
		dst = r.CreateTopic
	case RecordDeleteTopic:
		r.DeleteTopic = new(DeleteTopicRecord)
		dst = r.DeleteTopic
	case RecordCreatePartitions:
		r.CreatePartitions = new(CreatePartitionsRecord)
		dst = r.CreatePartitions
	case RecordAlterTopicConfigs:
		r.AlterTopicConfigs = new(AlterTopicConfigsRecord)
		dst = r.AlterTopicConfigs
	case RecordAllocateProducerIDs:
		r.AllocateProducerIDs = new(AllocateProducerIDsRecord)
		dst = r.AllocateProducerIDs
	case RecordPartitionChange:
		r.PartitionChange = new(PartitionChangeRecord)
		dst = r.PartitionChange
	}
	if len(env.Data) == 0 || string(env.Data) == "null" {
		return Record{}, fmt.Errorf("%w: %s record without data", ErrMalformedRecord, env.Type)
	}
	if err := strictUnmarshal(env.Data, dst); err != nil {
		return Record{}, fmt.Errorf("%w: %s data: %v", ErrMalformedRecord, env.Type, err)
	}
	return r, nil
}

// strictUnmarshal decodes exactly one JSON value, rejecting unknown fields
// and trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}
