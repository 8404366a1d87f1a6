// Package recordjson is klog's JSON record schema: one record per line,
// lossless, shared by klog consume -f json, produce -f json, klog log dump
// --print-data and the admin API's batch view (docs/records-json.md is the
// user-facing description).
package recordjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Lossless JSON lines: one record per line, the one schema shared by
// `consume -f json`, `produce -f json` and every other klog tool that prints
// or reads records (docs/records-json.md is the user-facing description):
//
//	{
//	  "topic": "orders",            // string; ignored by produce (TOPIC wins)
//	  "partition": 0,               // int32; produce honours it unless -p is given
//	  "offset": 42,                 // int64; ignored by produce
//	  "timestamp": 1700000000000,   // int64 unix milliseconds; produce keeps it
//	  "timestamp_type": "log_append", // only present for broker-assigned times
//	  "key": "k1",                  // string or null (null key != empty key)
//	  "key_encoding": "base64",     // only present when key is not valid UTF-8
//	  "value": "v1",                // string or null (null value is a tombstone)
//	  "value_encoding": "base64",   // only present when value is not valid UTF-8
//	  "headers": [                  // always present, in record order, duplicates kept
//	    {"key": "h", "key_encoding"?: "base64", "value": "x" | null, "value_encoding"?: "base64"}
//	  ]
//	}
//
// A byte string that is valid UTF-8 is written as a JSON string, anything
// else as standard base64 with the matching "_encoding": "base64" marker, so
// every byte sequence survives a round trip exactly. Readers ignore fields
// they do not know; writers never emit fields other than those above.

// EncodingBase64 is the only value of the *_encoding markers.
const EncodingBase64 = "base64"

// Errors of Parse.
var (
	// ErrNotObject: the line is not one JSON object.
	ErrNotObject = errors.New("JSON record: want one JSON object per line")
	// ErrTrailing: data after the object on the line.
	ErrTrailing = errors.New("JSON record: unexpected data after the object")
)

// Values of timestamp_type.
const (
	TimestampCreate    = "create"
	TimestampLogAppend = "log_append"
)

// Record is the wire shape of one JSON line. Pointers tell absent or
// null apart from zero.
type Record struct {
	Topic         *string  `json:"topic,omitempty"`
	Partition     *int32   `json:"partition,omitempty"`
	Offset        *int64   `json:"offset,omitempty"`
	Timestamp     *int64   `json:"timestamp,omitempty"`
	TimestampType string   `json:"timestamp_type,omitempty"`
	Key           *string  `json:"key"`
	KeyEncoding   string   `json:"key_encoding,omitempty"`
	Value         *string  `json:"value"`
	ValueEncoding string   `json:"value_encoding,omitempty"`
	Headers       []Header `json:"headers"`
}

// Header is one record header.
type Header struct {
	Key           string  `json:"key"`
	KeyEncoding   string  `json:"key_encoding,omitempty"`
	Value         *string `json:"value"`
	ValueEncoding string  `json:"value_encoding,omitempty"`
}

// EncodeBytes returns b as a JSON string value and its encoding marker: nil
// stays nil (JSON null), valid UTF-8 is kept as text, anything else is
// base64.
func EncodeBytes(b []byte) (*string, string) {
	if b == nil {
		return nil, ""
	}
	if utf8.Valid(b) {
		s := string(b)
		return &s, ""
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s, EncodingBase64
}

// DecodeBytes reverses EncodeBytes; field names the value in errors. A
// JSON null decodes to nil, a string to a non-nil slice (empty for "").
func DecodeBytes(field string, s *string, encoding string) ([]byte, error) {
	switch encoding {
	case "":
		if s == nil {
			return nil, nil
		}
		return append([]byte{}, *s...), nil
	case EncodingBase64:
		if s == nil {
			return nil, nil
		}
		b, err := base64.StdEncoding.DecodeString(*s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		if b == nil {
			b = []byte{}
		}
		return b, nil
	default:
		return nil, fmt.Errorf("%s_encoding %q: want %q", field, encoding, EncodingBase64)
	}
}

// Append appends r as one JSON line (with the trailing newline) to dst.
func Append(dst []byte, r *kgo.Record) ([]byte, error) {
	topic := r.Topic
	partition := r.Partition
	offset := r.Offset
	ts := r.Timestamp.UnixMilli()
	jr := Record{
		Topic:     &topic,
		Partition: &partition,
		Offset:    &offset,
		Timestamp: &ts,
		Headers:   make([]Header, 0, len(r.Headers)),
	}
	if r.Attrs.TimestampType() == 1 {
		jr.TimestampType = TimestampLogAppend
	}
	jr.Key, jr.KeyEncoding = EncodeBytes(r.Key)
	jr.Value, jr.ValueEncoding = EncodeBytes(r.Value)
	for _, h := range r.Headers {
		var jh Header
		key, keyEnc := EncodeBytes([]byte(h.Key))
		jh.Key, jh.KeyEncoding = *key, keyEnc
		jh.Value, jh.ValueEncoding = EncodeBytes(h.Value)
		jr.Headers = append(jr.Headers, jh)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&jr); err != nil { // Encode appends the newline
		return dst, fmt.Errorf("encode record %s[%d]@%d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	return append(dst, buf.Bytes()...), nil
}

// Parse decodes one JSON line into a record. Partition is -1 when
// the line has no partition; Offset is always 0 and Topic is the line's
// topic, if any (producers ignore both). Timestamp is zero when absent.
func Parse(line []byte) (*kgo.Record, error) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, ErrNotObject
	}
	var jr Record
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&jr); err != nil {
		return nil, fmt.Errorf("decode JSON record: %w", err)
	}
	if len(bytes.TrimSpace(trimmed[dec.InputOffset():])) > 0 {
		return nil, ErrTrailing
	}
	r := &kgo.Record{Partition: -1}
	if jr.Topic != nil {
		r.Topic = *jr.Topic
	}
	if jr.Partition != nil {
		if *jr.Partition < 0 {
			return nil, fmt.Errorf("partition %d: must not be negative", *jr.Partition)
		}
		r.Partition = *jr.Partition
	}
	if jr.Timestamp != nil {
		r.Timestamp = time.UnixMilli(*jr.Timestamp)
	}
	switch jr.TimestampType {
	case "", TimestampCreate, TimestampLogAppend:
	default:
		return nil, fmt.Errorf("timestamp_type %q: want %q or %q", jr.TimestampType, TimestampCreate, TimestampLogAppend)
	}
	var err error
	if r.Key, err = DecodeBytes("key", jr.Key, jr.KeyEncoding); err != nil {
		return nil, err
	}
	if r.Value, err = DecodeBytes("value", jr.Value, jr.ValueEncoding); err != nil {
		return nil, err
	}
	for i, jh := range jr.Headers {
		key, err := DecodeBytes(fmt.Sprintf("headers[%d].key", i), &jh.Key, jh.KeyEncoding)
		if err != nil {
			return nil, err
		}
		value, err := DecodeBytes(fmt.Sprintf("headers[%d].value", i), jh.Value, jh.ValueEncoding)
		if err != nil {
			return nil, err
		}
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: string(key), Value: value})
	}
	return r, nil
}
