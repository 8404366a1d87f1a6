// Package logtest builds valid v2 record batches for tests of klog's
// storage and of the code above it: a thin convenience layer over the
// batch view and builder of store/log/record.
//
//	b := logtest.Batch(logtest.Values(10, 100)...)        // 10 records, 100-byte values
//	b := logtest.BatchWith(logtest.Options{BaseTimestamp: ts}, recs...)
//	bs := logtest.Concat(b1, b2)                          // several batches in one append
//
// Batches come out with base offset 0, partition leader epoch -1 and a
// correct CRC-32C, exactly what a producer sends.
package logtest

import (
	"bytes"
	"time"

	"github.com/klogdev/klog/store/log/record"
)

// Record is one record of a batch.
type Record struct {
	Key   []byte // nil is a null key
	Value []byte // nil is a null value (a tombstone)
	// TimestampDelta is added to the batch's base timestamp.
	TimestampDelta int64
	Headers        []Header
}

// Header is a record header.
type Header = record.Header

// Options shape a batch; the zero value gives an uncompressed,
// non-transactional batch timestamped now, without producer ID.
type Options struct {
	BaseTimestamp int64 // ms; 0 means time.Now
	// Compression is the codec: 0 none, 1 gzip, 2 snappy (xerial framed as
	// the Java client writes it; unframed with RawSnappy), 3 lz4 (frame
	// format), 4 zstd. Other values are written into the attributes of an
	// uncompressed batch.
	Compression   int8
	RawSnappy     bool
	LogAppendTime bool
	Transactional bool
	Control       bool
	ProducerID    int64 // 0 means -1 (none)
	ProducerEpoch int16 // used with ProducerID
	BaseSequence  int32 // used with ProducerID
}

// Batch returns an uncompressed batch of records timestamped now.
func Batch(records ...Record) []byte { return BatchWith(Options{}, records...) }

// Values returns n records without key whose values are size bytes each,
// filled with a per-record pattern; TimestampDelta is 0.
func Values(n, size int) []Record {
	rs := make([]Record, n)
	for i := range rs {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte('a' + (i+j)%26)
		}
		rs[i] = Record{Value: v}
	}
	return rs
}

// Concat joins batches into the byte form of a produce request's partition
// data.
func Concat(batches ...[]byte) []byte { return bytes.Join(batches, nil) }

// BatchWith returns a batch with the given options. With no records it
// returns a (deliberately invalid) batch with a record count of 0.
func BatchWith(o Options, records ...Record) []byte {
	pid, epoch, seq := int64(-1), int16(-1), int32(-1)
	if o.ProducerID != 0 {
		pid, epoch, seq = o.ProducerID, o.ProducerEpoch, o.BaseSequence
	}
	return build(o, pid, epoch, seq, records)
}

func build(o Options, pid int64, epoch int16, seq int32, records []Record) []byte {
	base := o.BaseTimestamp
	if base == 0 {
		base = time.Now().UnixMilli()
	}
	b := record.NewBuilder(base)
	codec := record.Compression(o.Compression)
	if codec.Valid() {
		b.Compression, b.RawSnappy = codec, o.RawSnappy
	}
	b.Transactional, b.Control = o.Transactional, o.Control
	b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, seq
	maxTs := base
	for i, r := range records {
		var hs record.Headers
		if len(r.Headers) > 0 {
			hs = record.MakeHeaders(r.Headers...)
		}
		b.Append(record.Record{OffsetDelta: int32(i), TimestampDelta: r.TimestampDelta, Key: r.Key, Value: r.Value, Headers: hs})
		maxTs = max(maxTs, base+r.TimestampDelta)
	}
	if o.LogAppendTime {
		b.TimestampType, b.AppendTime = record.LogAppendTime, maxTs
	}
	batch, err := b.Build()
	if err != nil {
		panic(err) // the codecs are valid and compress into memory
	}
	if !codec.Valid() {
		batch.SetAttributes(batch.Attributes().WithCompression(codec))
		batch.Seal()
	}
	return batch
}

// Reseal recomputes the CRC of a single batch after a test modified it.
func Reseal(batch []byte) { record.Batch(batch).Seal() }

// ProducerBatch returns an uncompressed batch of n records with 10-byte
// values from producer pid (any id, 0 included) at epoch, starting at
// sequence seq, timestamped ts (ms; 0 means now). transactional sets the
// transactional attribute.
func ProducerBatch(ts, pid int64, epoch int16, seq int32, n int, transactional bool) []byte {
	return build(Options{BaseTimestamp: ts, Transactional: transactional}, pid, epoch, seq, Values(n, 10))
}

// Marker is a decoded transaction marker (the control record of a
// transaction's end).
type Marker = record.TxnMarker

// ReadMarker decodes a control batch holding a transaction marker; ok is
// false for any other batch.
func ReadMarker(batch []byte) (Marker, bool) {
	b, err := record.Parse(batch)
	if err != nil {
		return Marker{}, false
	}
	m, ok, err := b.TxnMarker()
	return m, ok && err == nil
}

// Header fields of a stored batch, for assertions.

// BaseOffset returns the batch's base offset.
func BaseOffset(batch []byte) int64 { return record.Batch(batch).BaseOffset() }

// LeaderEpoch returns the batch's partition leader epoch.
func LeaderEpoch(batch []byte) int32 { return record.Batch(batch).PartitionLeaderEpoch() }

// Size returns the whole size of the batch starting at b[0].
func Size(b []byte) int { return record.Batch(b).Size() }

// RecordCount returns the number of records in the batch.
func RecordCount(batch []byte) int { return int(record.Batch(batch).RecordCount()) }

// ProducerID returns the batch's producer id.
func ProducerID(batch []byte) int64 { return record.Batch(batch).ProducerID() }

// BaseSequence returns the batch's base sequence.
func BaseSequence(batch []byte) int32 { return record.Batch(batch).BaseSequence() }

// MaxTimestamp returns the batch's max timestamp.
func MaxTimestamp(batch []byte) int64 { return record.Batch(batch).MaxTimestamp() }

// Split cuts concatenated batches into single batches; it stops at a
// truncated tail.
func Split(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 12 {
		n := Size(b)
		if n < 12 || n > len(b) {
			break
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}
