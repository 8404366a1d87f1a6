package metadata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
)

// Record is one change to the metadata: a pointer to one of the record
// kinds (*CreateTopicRecord, ...), each of which owns its payload, its
// name in the encoding (Type) and how the state machine applies it
// (apply). A new kind is such a type and a row in recordKinds.
type Record interface {
	// Type names the record's kind as the encoding writes it.
	Type() string
	// apply returns img with the record applied: see Image.Apply.
	apply(img *Image) (*Image, error)
}

// recordKinds makes an empty record of every kind Decode knows.
var recordKinds = [...]func() Record{
	func() Record { return new(SetClusterIDRecord) },
	func() Record { return new(RegisterBrokerRecord) },
	func() Record { return new(UnregisterBrokerRecord) },
	func() Record { return new(SetControllerRecord) },
	func() Record { return new(CreateTopicRecord) },
	func() Record { return new(DeleteTopicRecord) },
	func() Record { return new(CreatePartitionsRecord) },
	func() Record { return new(AlterTopicConfigsRecord) },
	func() Record { return new(AllocateProducerIDsRecord) },
	func() Record { return new(PartitionChangeRecord) },
	func() Record { return new(CreateACLsRecord) },
	func() Record { return new(RemoveACLsRecord) },
	func() Record { return new(AlterSCRAMCredentialsRecord) },
	func() Record { return new(ClientQuotaRecord) },
	func() Record { return new(DelegationTokenRecord) },
	func() Record { return new(RemoveDelegationTokenRecord) },
	func() Record { return new(FeatureLevelRecord) },
}

// recordKindsByType maps each kind's Type to recordKinds' row.
var recordKindsByType = func() map[string]func() Record {
	m := make(map[string]func() Record, len(recordKinds))
	for _, k := range recordKinds {
		m[k().Type()] = k
	}
	return m
}()

// checkPayload returns an error unless r is a record with its payload.
func checkPayload(r Record) error {
	if r == nil {
		return fmt.Errorf("%w: no record", ErrUnknownRecordType)
	}
	// Every kind is a pointer (apply is unexported, so no other package
	// adds one).
	if v := reflect.ValueOf(r); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("%w: %s record without payload", ErrInvalidRecord, r.Type())
	}
	return nil
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

// Encode encodes a record (see the package doc for the layout).
func Encode(r Record) ([]byte, error) {
	if err := checkPayload(r); err != nil {
		return nil, err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode %s record: %w", r.Type(), err)
	}
	return json.Marshal(envelope{V: recordVersion, Type: r.Type(), Data: data})
}

// Decode decodes a record. Unknown types, newer versions, unknown fields
// and trailing bytes are errors.
func Decode(b []byte) (Record, error) {
	if len(b) > maxRecordBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrMalformedRecord, len(b), maxRecordBytes)
	}
	var env envelope
	if err := strictUnmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("%w: envelope: %v", ErrMalformedRecord, err)
	}
	kind, ok := recordKindsByType[env.Type]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownRecordType, env.Type)
	}
	if env.V < 1 || env.V > recordVersion {
		return nil, fmt.Errorf("%w: %s v%d", ErrUnsupportedVersion, env.Type, env.V)
	}
	r := kind()
	if len(env.Data) == 0 || string(env.Data) == "null" {
		return nil, fmt.Errorf("%w: %s record without data", ErrMalformedRecord, env.Type)
	}
	if err := strictUnmarshal(env.Data, r); err != nil {
		return nil, fmt.Errorf("%w: %s data: %v", ErrMalformedRecord, env.Type, err)
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
