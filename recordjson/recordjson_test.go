package recordjson

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestJSONRecordEncode(t *testing.T) {
	ts := time.UnixMilli(1700000000123)
	tests := []struct {
		name string
		r    kgo.Record
		want string
	}{
		{"null key and value", kgo.Record{Topic: "t", Partition: 1, Offset: 2, Timestamp: ts},
			`{"topic":"t","partition":1,"offset":2,"timestamp":1700000000123,"key":null,"value":null,"headers":[]}`},
		{"empty key and value", kgo.Record{Topic: "t", Timestamp: ts, Key: []byte{}, Value: []byte{}},
			`{"topic":"t","partition":0,"offset":0,"timestamp":1700000000123,"key":"","value":"","headers":[]}`},
		{"binary", kgo.Record{Topic: "t", Timestamp: ts, Key: []byte{0xff}, Value: []byte{0, 0xc0}},
			`{"topic":"t","partition":0,"offset":0,"timestamp":1700000000123,"key":"/w==","key_encoding":"base64","value":"AMA=","value_encoding":"base64","headers":[]}`},
		{"text with html and control characters", kgo.Record{Topic: "t", Timestamp: ts, Value: []byte("<a>&\x00\n")},
			`{"topic":"t","partition":0,"offset":0,"timestamp":1700000000123,"key":null,"value":"<a>&\u0000\n","headers":[]}`},
		{"log append time", kgo.Record{Topic: "t", Timestamp: ts, Attrs: logAppendAttrs()},
			`{"topic":"t","partition":0,"offset":0,"timestamp":1700000000123,"timestamp_type":"log_append","key":null,"value":null,"headers":[]}`},
		{"headers", kgo.Record{Topic: "t", Timestamp: ts, Headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "a"}, {Key: "\xff", Value: []byte{}}}},
			`{"topic":"t","partition":0,"offset":0,"timestamp":1700000000123,"key":null,"value":null,"headers":[{"key":"a","value":"1"},{"key":"a","value":null},{"key":"/w==","key_encoding":"base64","value":""}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Append(nil, &tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			back, err := Parse(bytes.TrimSuffix(got, []byte("\n")))
			if err != nil {
				t.Fatalf("parse own output: %v", err)
			}
			assertSameRecord(t, back, &tc.r)
		})
	}
}

// logAppendAttrs returns record attributes with the log-append-time bit set.
func logAppendAttrs() kgo.RecordAttrs {
	return kgo.NewRecordAttrs(kgo.RecordAttrsOpts{TimestampType: 1})
}

// assertSameRecord compares what the JSON schema carries: key, value,
// headers (nil versus empty included) and the millisecond timestamp.
func assertSameRecord(t *testing.T, got, want *kgo.Record) {
	t.Helper()
	if !sameBytes(got.Key, want.Key) {
		t.Errorf("key = %#v, want %#v", got.Key, want.Key)
	}
	if !sameBytes(got.Value, want.Value) {
		t.Errorf("value = %#v, want %#v", got.Value, want.Value)
	}
	if len(got.Headers) != len(want.Headers) {
		t.Fatalf("headers = %#v, want %#v", got.Headers, want.Headers)
	}
	for i := range got.Headers {
		if got.Headers[i].Key != want.Headers[i].Key || !sameBytes(got.Headers[i].Value, want.Headers[i].Value) {
			t.Errorf("header %d = %#v, want %#v", i, got.Headers[i], want.Headers[i])
		}
	}
	if got.Timestamp.UnixMilli() != want.Timestamp.UnixMilli() {
		t.Errorf("timestamp = %d, want %d", got.Timestamp.UnixMilli(), want.Timestamp.UnixMilli())
	}
}

// sameBytes is bytes.Equal that also tells nil from empty.
func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

func TestJSONRecordParse(t *testing.T) {
	tests := []struct {
		in   string
		want kgo.Record
	}{
		{`{"value":"v"}`, kgo.Record{Partition: -1, Value: []byte("v")}},
		{`{"key":"k","value":null,"partition":3}`, kgo.Record{Partition: 3, Key: []byte("k")}},
		{`{"key":"","value":""}`, kgo.Record{Partition: -1, Key: []byte{}, Value: []byte{}}},
		{`{"value":"AAE=","value_encoding":"base64"}`, kgo.Record{Partition: -1, Value: []byte{0, 1}}},
		{`{"value":"","value_encoding":"base64"}`, kgo.Record{Partition: -1, Value: []byte{}}},
		{`{"value":null,"value_encoding":"base64"}`, kgo.Record{Partition: -1}},
		{`{"timestamp":1700000000000,"value":"v","unknown_field":[1,2]}`, kgo.Record{Partition: -1, Timestamp: time.UnixMilli(1700000000000), Value: []byte("v")}},
		{` {"headers":[{"key":"a","value":"1"},{"key":"a","value":null},{"key":"/w==","key_encoding":"base64","value":"/w==","value_encoding":"base64"}]} `,
			kgo.Record{Partition: -1, Headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "a"}, {Key: "\xff", Value: []byte{0xff}}}}},
		{`{"topic":"other","offset":99,"value":"v"}`, kgo.Record{Partition: -1, Topic: "other", Value: []byte("v")}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got.Partition != tc.want.Partition || got.Topic != tc.want.Topic || got.Offset != 0 {
				t.Errorf("topic/partition/offset = %q/%d/%d, want %q/%d/0", got.Topic, got.Partition, got.Offset, tc.want.Topic, tc.want.Partition)
			}
			if got.Timestamp.IsZero() != tc.want.Timestamp.IsZero() {
				t.Errorf("timestamp = %v, want %v", got.Timestamp, tc.want.Timestamp)
			}
			assertSameRecord(t, got, &tc.want)
		})
	}
}

func TestJSONRecordParseErrors(t *testing.T) {
	for _, in := range []string{
		``, `null`, `[]`, `"x"`, `{`, `{"value":1}`, `{"key":true}`,
		`{"value":"!!","value_encoding":"base64"}`,
		`{"value":"v","value_encoding":"hex"}`,
		`{"key":"k","key_encoding":"rot13"}`,
		`{"headers":[{"key":"a","value":"%","value_encoding":"base64"}]}`,
		`{"headers":{"a":"b"}}`,
		`{"partition":-2}`,
		`{"partition":3000000000}`,
		`{"timestamp":"yesterday"}`,
		`{"timestamp_type":"wall"}`,
		`{"value":"a"} {"value":"b"}`,
		`{"value":"a"} trailing`,
	} {
		if r, err := Parse([]byte(in)); err == nil {
			t.Errorf("parse %q = %+v, want an error", in, r)
		}
	}
}

// FuzzJSONRecord checks the decoder never panics on any input, and that
// whatever it accepts survives encode → decode unchanged.
func FuzzJSONRecord(f *testing.F) {
	for _, seed := range []string{
		`{"value":"v"}`,
		`{"key":null,"value":null,"headers":[]}`,
		`{"key":"/w==","key_encoding":"base64","value":"","headers":[{"key":"a","value":null}]}`,
		`{"topic":"t","partition":0,"offset":5,"timestamp":-1,"timestamp_type":"log_append","value":"x"}`,
		`{"value":"\u0000\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Parse(in)
		if err != nil {
			return
		}
		if r.Partition < -1 {
			t.Fatalf("accepted negative partition %d", r.Partition)
		}
		if r.Partition < 0 {
			r.Partition = 0
		}
		out, err := Append(nil, r)
		if err != nil {
			t.Fatalf("encode accepted record: %v", err)
		}
		if !bytes.HasSuffix(out, []byte("\n")) || bytes.Count(out, []byte("\n")) != 1 {
			t.Fatalf("encoding is not one line: %q", out)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("decode own encoding %q: %v", out, err)
		}
		if !sameBytes(back.Key, r.Key) || !sameBytes(back.Value, r.Value) || !reflect.DeepEqual(headerPairs(back), headerPairs(r)) {
			t.Fatalf("round trip changed the record:\n in  %q\n out %q", in, out)
		}
		if !strings.Contains(string(out), `"headers":[`) {
			t.Fatalf("headers missing: %q", out)
		}
	})
}

// headerPairs flattens headers with an explicit null marker.
func headerPairs(r *kgo.Record) []string {
	var out []string
	for _, h := range r.Headers {
		v := "null"
		if h.Value != nil {
			v = "=" + string(h.Value)
		}
		out = append(out, h.Key, v)
	}
	return out
}
