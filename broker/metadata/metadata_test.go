package metadata

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func FuzzDecode(f *testing.F) {
	seeds := []Record{
		&SetClusterIDRecord{ClusterID: "c"},
		&RegisterBrokerRecord{Broker: Broker{ID: 1, Host: "h", Port: 9092}},
		&CreateTopicRecord{Name: "t", ID: testID(3), Partitions: []Partition{{Index: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}, Configs: map[string]string{"a": "b"}},
		&AlterTopicConfigsRecord{Topic: "t", Set: map[string]string{"x": "y"}, Delete: []string{"z"}},
		&PartitionChangeRecord{Topic: "t", ISR: []int32{}},
		&PartitionChangeRecord{Topic: "t", ISR: []int32{1}, IfLeaderEpoch: new(int32(2)), IfPartitionEpoch: new(int32(5))},
		&AllocateProducerIDsRecord{BlockSize: 10},
	}
	for _, r := range seeds {
		b, err := Encode(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"v":1,"type":"DeleteTopic","data":{"name":"t","id":"AAAAAAAAAAAAAAAAAAAAAw"}}`))
	base := Empty()
	for _, r := range seeds[:3] {
		if next, err := base.Apply(r); err == nil {
			base = next
		}
	}
	// Property: Decode never panics; a decoded record re-encodes to a fixed
	// point; applying it never panics and never changes the base image.
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		enc, err := Encode(r)
		if err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
		r2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decode %s: %v", enc, err)
		}
		enc2, err := Encode(r2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable:\n%s\n%s", enc, enc2)
		}
		before, _ := EncodeImage(base)
		_, _ = base.Apply(r)
		if after, _ := EncodeImage(base); !bytes.Equal(before, after) {
			t.Fatal("apply modified the base image")
		}
	})
}

func FuzzDecodeImage(f *testing.F) {
	img := Empty()
	for _, r := range []Record{
		&RegisterBrokerRecord{Broker: Broker{ID: 1, Host: "h", Port: 9092}},
		&CreateTopicRecord{Name: "t", ID: testID(3), Partitions: []Partition{{Index: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}},
	} {
		next, err := img.Apply(r)
		if err != nil {
			f.Fatal(err)
		}
		img = next
	}
	b, err := EncodeImage(img)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	// Property: DecodeImage never panics, and a decoded image re-encodes to
	// bytes that decode to the same encoding.
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := DecodeImage(b)
		if err != nil {
			return
		}
		enc, err := EncodeImage(img)
		if err != nil {
			t.Fatal(err)
		}
		img2, err := DecodeImage(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if enc2, _ := EncodeImage(img2); !bytes.Equal(enc, enc2) {
			t.Fatal("image encoding not stable")
		}
	})
}

func TestApplyMissingPayload(t *testing.T) {
	img := Empty()
	missing := []Record{nil}
	for _, kind := range recordKinds {
		missing = append(missing, reflect.Zero(reflect.TypeOf(kind())).Interface().(Record))
	}
	for _, r := range missing {
		if _, err := img.Apply(r); err == nil {
			t.Errorf("%T without payload applied", r)
		}
		if _, err := Encode(r); err == nil {
			t.Errorf("%T without payload encoded", r)
		}
	}
}

func TestValidateTopicName(t *testing.T) {
	for name, ok := range map[string]bool{
		"":                       false,
		".":                      false,
		"..":                     false,
		"...":                    true,
		"a-b_c.D9":               true,
		strings.Repeat("x", 249): true,
		strings.Repeat("x", 250): false,
		"a b":                    false,
		"ü":                      false,
	} {
		err := ValidateTopicName(name)
		if (err == nil) != ok || err != nil && !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("%q: %v", name, err)
		}
	}
}

func TestNewTopicID(t *testing.T) {
	seen := map[[16]byte]bool{}
	for range 1000 {
		id, err := NewTopicID(nil)
		if err != nil {
			t.Fatal(err)
		}
		if id == ([16]byte{}) || seen[id] || strings.HasPrefix(UUID(id).String(), "-") || id[6]>>4 != 4 {
			t.Fatalf("bad id %v", UUID(id))
		}
		seen[id] = true
		var back UUID
		if err := back.UnmarshalText([]byte(UUID(id).String())); err != nil || back != UUID(id) {
			t.Fatalf("round trip %v: %v", UUID(id), err)
		}
	}
	// An exhausted reader is an error, not an endless loop.
	if _, err := NewTopicID(bytes.NewReader(nil)); err == nil {
		t.Error("empty reader gave an id")
	}
}

func TestApplySharesUnchanged(t *testing.T) {
	img := Empty()
	steps := []Record{
		&RegisterBrokerRecord{Broker: Broker{ID: 1, Host: "h", Port: 1}},
		&CreateTopicRecord{Name: "a", ID: testID(1), Partitions: []Partition{{Index: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}},
		&CreateTopicRecord{Name: "b", ID: testID(2), Partitions: []Partition{{Index: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}},
	}
	for _, r := range steps {
		next, err := img.Apply(r)
		if err != nil {
			t.Fatal(err)
		}
		img = next
	}
	a := img.Topics["a"]
	next, err := img.Apply(&AlterTopicConfigsRecord{Topic: "b", Set: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if next.Topics["a"] != a {
		t.Error("unchanged topic was copied")
	}
	if len(img.Topics["b"].Configs) != 0 || next.Topics["b"].Configs["k"] != "v" {
		t.Error("alter changed the old image or missed the new one")
	}
}

func TestCoordinatorPartition(t *testing.T) {
	// Expected values from Java's String.hashCode (s[0]*31^(n-1) + ... over
	// UTF-16 code units, int32 overflow), made non-negative with Kafka's
	// Utils.abs, mod 50. "my-group" → 12 is what Kafka itself reports.
	for _, tc := range []struct {
		key  string
		want int32
	}{
		{"", 0},
		{"a", 47},                     // 97
		{"group", 47},                 // 98629247
		{"txn", 6},                    // 115306
		{"my-group", 12},              // -1906497762: abs, not the sign mask (which gives 36)
		{"console-consumer-12345", 6}, // 158455506
		{"polygenelubricants", 0},     // Integer.MIN_VALUE: Utils.abs maps it to 0
		{"é😀", 12},                    // 1996812: a surrogate pair counts as two code units
		{"klog-consumers", 45},        // 483754345
	} {
		if got := CoordinatorPartition(tc.key, 50); got != tc.want {
			t.Errorf("CoordinatorPartition(%q, 50) = %d, want %d", tc.key, got, tc.want)
		}
	}
	if got := CoordinatorPartition("anything", 1); got != 0 {
		t.Errorf("CoordinatorPartition with one partition = %d", got)
	}
	if got := CoordinatorPartition("anything", 0); got != 0 {
		t.Errorf("CoordinatorPartition with no partitions = %d", got)
	}
}

// TestClusterIDBrokerDefaults: the broker configs set with the cluster ID
// are set the first time only, so a second SetClusterID of the same ID
// (a new leader's, proposed from a stale image) leaves a changed value.
func TestClusterIDBrokerDefaults(t *testing.T) {
	set := &SetClusterIDRecord{ClusterID: "c", BrokerDefaults: map[string]string{"min.insync.replicas": "1"}}
	img, err := Empty().Apply(set)
	if err != nil || img.BrokerConfigs[""]["min.insync.replicas"] != "1" {
		t.Fatalf("first SetClusterID: %v, broker configs %v", err, img.BrokerConfigs)
	}
	broker := ""
	img, err = img.Apply(&AlterTopicConfigsRecord{Broker: &broker, Set: map[string]string{"min.insync.replicas": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if img, err = img.Apply(set); err != nil || img.BrokerConfigs[""]["min.insync.replicas"] != "2" {
		t.Errorf("second SetClusterID: %v, broker configs %v; want min.insync.replicas kept at 2", err, img.BrokerConfigs)
	}
}
