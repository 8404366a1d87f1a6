package txn

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRecordRoundTrip(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	m := newMeta("t1", 42, 60000, now)
	m.epoch = 3
	m.prevProducerID = 41
	m = m.toOngoing([]TopicPartition{{"foo", 1}, {"bar", 0}, {"foo", 0}}, 0, now.Add(time.Second))
	r := metaRecord(m)
	if want := []byte{0, 0, 0, 2, 't', '1'}; !bytes.Equal(r.Key, want) {
		t.Fatalf("key = %v, want %v", r.Key, want)
	}
	if r.Value[0] != 0 || r.Value[1] != 1 {
		t.Fatalf("value version = %v", r.Value[:2])
	}
	id, got, ok, err := decodeRecord(r)
	if err != nil || !ok || id != "t1" {
		t.Fatalf("decode: %q %v %v", id, ok, err)
	}
	m.persisted = true
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
	}
	// The value in Kafka's field order: pid, epoch, timeout, state, ...
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(r.Value); err != nil {
		t.Fatal(err)
	}
	if v.ProducerID != 42 || v.ProducerEpoch != 3 || v.TimeoutMillis != 60000 || v.State != 1 ||
		v.StartTimestamp != now.Add(time.Second).UnixMilli() || v.PreviousProducerID != 41 ||
		len(v.Topics) != 2 || v.Topics[0].Topic != "bar" || !reflect.DeepEqual(v.Topics[1].Partitions, []int32{0, 1}) {
		t.Fatalf("value = %+v", v)
	}

	// Transaction version 2: the client's version (tag 2) and the producer
	// id an exhausted epoch rotates to (tag 1) are written and read back.
	p := m.toPrepareBumped(true, 77, now.Add(2*time.Second))
	r = metaRecord(p)
	v = kmsg.TxnMetadataValue{}
	if err := v.ReadFrom(r.Value); err != nil {
		t.Fatal(err)
	}
	if v.ClientTransactionVersion != 2 || v.NextProducerID != 77 || v.ProducerEpoch != 4 || v.State != 2 {
		t.Fatalf("transaction version 2 value = %+v", v)
	}
	if _, got, _, err := decodeRecord(r); err != nil || got.txnVersion != 2 || got.nextProducerID != 77 || got.epoch != 4 {
		t.Fatalf("transaction version 2 decoded = %+v %v", got, err)
	}
	c := p.toComplete(now.Add(3 * time.Second))
	if c.producerID != 77 || c.epoch != 0 || c.prevProducerID != 42 || c.nextProducerID != -1 {
		t.Fatalf("complete after an exhausted epoch = %+v", c)
	}

	// Empty writes null partitions and reads back none.
	e := newMeta("t2", 7, 1000, now)
	e.epoch = math.MaxInt16 - 1
	r = metaRecord(e)
	// version, pid, epoch, timeout, state, then the compact array length:
	// 0 is null (an empty array would be 1).
	if r.Value[17] != 0 {
		t.Fatalf("empty partitions encoded as %d, want null", r.Value[17])
	}
	if _, got, _, err := decodeRecord(r); err != nil || got.state != StateEmpty || len(got.partitions) != 0 || got.epoch != math.MaxInt16-1 || got.start != -1 {
		t.Fatalf("empty = %+v %v", got, err)
	}

	// Version 0 values (non-flexible) are read.
	v0 := kmsg.NewTxnMetadataValue()
	v0.Version, v0.ProducerID, v0.ProducerEpoch, v0.State, v0.TimeoutMillis = 0, 9, 1, 4, 500
	if _, got, ok, err := decodeRecord(Record{Key: txnKey("t3"), Value: v0.AppendTo(nil)}); err != nil || !ok || got.state != StateCompleteCommit || got.producerID != 9 {
		t.Fatalf("v0 = %+v %v %v", got, ok, err)
	}

	// Tombstones, unknown keys, garbage.
	if id, got, ok, err := decodeRecord(tombstone("t1")); err != nil || !ok || got != nil || id != "t1" {
		t.Fatalf("tombstone = %q %v %v %v", id, got, ok, err)
	}
	if _, _, ok, err := decodeRecord(Record{Key: []byte{0, 5, 1}}); ok || err != nil {
		t.Fatalf("unknown key version: %v %v", ok, err)
	}
	for _, bad := range []Record{
		{Key: []byte{0}},
		{Key: txnKey("t1"), Value: []byte{0, 1, 2}},
		{Key: txnKey("t1"), Value: []byte{0, 9, 0, 0}},
		{Key: []byte{0, 0, 0, 9, 'x'}},
	} {
		if _, _, _, err := decodeRecord(bad); !errors.Is(err, ErrBadRecord) {
			t.Errorf("decode %v: %v", bad, err)
		}
	}
	// A state that is never written is refused.
	bad := kmsg.NewTxnMetadataValue()
	bad.Version, bad.State = 1, 7
	if _, _, _, err := decodeRecord(Record{Key: txnKey("t"), Value: bad.AppendTo(nil)}); !errors.Is(err, ErrBadRecord) {
		t.Errorf("PrepareEpochFence record: %v", err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	m := newMeta("t", 1, 100, time.UnixMilli(0)).toOngoing([]TopicPartition{{"a", 0}}, 0, time.UnixMilli(1))
	r := metaRecord(m)
	f.Add(r.Key, r.Value)
	f.Add(txnKey("x"), []byte(nil))
	// Property: decoding never panics, and a decoded record re-encodes to
	// one that decodes to the same state.
	f.Fuzz(func(t *testing.T, key, value []byte) {
		_, m, ok, err := decodeRecord(Record{Key: key, Value: value})
		if err != nil || !ok || m == nil {
			return
		}
		_, again, ok, err := decodeRecord(metaRecord(m))
		if err != nil || !ok || again.state != m.state || again.producerID != m.producerID || len(again.partitions) != len(m.partitions) {
			t.Fatalf("re-encode: %+v %v %v (was %+v)", again, ok, err, m)
		}
	})
}
