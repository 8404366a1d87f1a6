// Package logtest builds valid v2 record batches for tests of klog's
// storage and of the code above it.
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
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
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
type Header struct {
	Key   string
	Value []byte
}

// Options shape a batch; the zero value gives an uncompressed,
// non-transactional batch timestamped now, without producer ID.
type Options struct {
	BaseTimestamp int64 // ms; 0 means time.Now
	// Compression is the codec: 0 none, 1 gzip, 2 snappy (xerial framed as
	// the Java client writes it; unframed with RawSnappy), 3 lz4 (frame
	// format), 4 zstd.
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

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// BatchWith returns a batch with the given options. With no records it
// returns a (deliberately invalid) batch with a record count of 0.
func BatchWith(o Options, records ...Record) []byte {
	base := o.BaseTimestamp
	if base == 0 {
		base = time.Now().UnixMilli()
	}
	var body []byte
	maxTs := base
	for i, r := range records {
		body = appendRecord(body, int32(i), r)
		maxTs = max(maxTs, base+r.TimestampDelta)
	}
	body = compress(o, body)
	var attrs uint16 = uint16(o.Compression) & 0x07
	if o.LogAppendTime {
		attrs |= 0x08
	}
	if o.Transactional {
		attrs |= 0x10
	}
	if o.Control {
		attrs |= 0x20
	}
	pid, epoch, seq := int64(-1), int16(-1), int32(-1)
	if o.ProducerID != 0 {
		pid, epoch, seq = o.ProducerID, o.ProducerEpoch, o.BaseSequence
	}
	b := make([]byte, 0, 61+len(body))
	b = binary.BigEndian.AppendUint64(b, 0)                              // base offset
	b = binary.BigEndian.AppendUint32(b, uint32(49+len(body)))           // batch length
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)                     // partition leader epoch -1
	b = append(b, 2)                                                     // magic
	b = binary.BigEndian.AppendUint32(b, 0)                              // crc, set below
	b = binary.BigEndian.AppendUint16(b, attrs)                          // attributes
	b = binary.BigEndian.AppendUint32(b, uint32(max(len(records)-1, 0))) // last offset delta
	b = binary.BigEndian.AppendUint64(b, uint64(base))                   // base timestamp
	b = binary.BigEndian.AppendUint64(b, uint64(maxTs))                  // max timestamp
	b = binary.BigEndian.AppendUint64(b, uint64(pid))                    // producer id
	b = binary.BigEndian.AppendUint16(b, uint16(epoch))                  // producer epoch
	b = binary.BigEndian.AppendUint32(b, uint32(seq))                    // base sequence
	b = binary.BigEndian.AppendUint32(b, uint32(len(records)))           // record count
	b = append(b, body...)
	Reseal(b)
	return b
}

// Reseal recomputes the CRC of a single batch after a test modified it.
func Reseal(batch []byte) {
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], castagnoli))
}

func compress(o Options, body []byte) []byte {
	var buf bytes.Buffer
	switch o.Compression {
	case 0:
		return body
	case 1:
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(body)
		_ = w.Close()
	case 2:
		if o.RawSnappy {
			return s2.EncodeSnappy(nil, body)
		}
		return xerial.Encode(nil, body)
	case 3:
		w := lz4.NewWriter(&buf)
		_, _ = w.Write(body)
		_ = w.Close()
	case 4:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err) // only with invalid options, which are fixed here
		}
		defer enc.Close()
		return enc.EncodeAll(body, nil)
	default:
		return body
	}
	return buf.Bytes()
}

func appendRecord(dst []byte, offsetDelta int32, r Record) []byte {
	var rec []byte
	rec = append(rec, 0) // attributes
	rec = binary.AppendVarint(rec, r.TimestampDelta)
	rec = binary.AppendVarint(rec, int64(offsetDelta))
	rec = appendBytes(rec, r.Key)
	rec = appendBytes(rec, r.Value)
	rec = binary.AppendVarint(rec, int64(len(r.Headers)))
	for _, h := range r.Headers {
		rec = appendBytes(rec, []byte(h.Key))
		rec = appendBytes(rec, h.Value)
	}
	dst = binary.AppendVarint(dst, int64(len(rec)))
	return append(dst, rec...)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// ProducerBatch returns an uncompressed batch of n records with 10-byte
// values from producer pid (any id, 0 included) at epoch, starting at
// sequence seq, timestamped ts (ms; 0 means now). transactional sets the
// transactional attribute.
func ProducerBatch(ts, pid int64, epoch int16, seq int32, n int, transactional bool) []byte {
	b := BatchWith(Options{BaseTimestamp: ts, Transactional: transactional, ProducerID: 1, ProducerEpoch: epoch, BaseSequence: seq}, Values(n, 10)...)
	binary.BigEndian.PutUint64(b[43:], uint64(pid))
	Reseal(b)
	return b
}

// Marker is a decoded transaction marker (the control record of a
// transaction's end).
type Marker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
}

// ReadMarker decodes a control batch holding a transaction marker; ok is
// false for any other batch.
func ReadMarker(batch []byte) (Marker, bool) {
	if len(batch) < 61 || batch[22]&0x20 == 0 || batch[22]&0x07 != 0 || RecordCount(batch) < 1 {
		return Marker{}, false
	}
	rec := batch[61:]
	length, n := binary.Varint(rec)
	if n <= 0 || length < 0 || int(length) > len(rec)-n {
		return Marker{}, false
	}
	rec = rec[n : n+int(length)]
	if len(rec) < 1 {
		return Marker{}, false
	}
	rec = rec[1:] // attributes
	for range 2 { // timestamp delta, offset delta
		if _, n := binary.Varint(rec); n > 0 {
			rec = rec[n:]
		} else {
			return Marker{}, false
		}
	}
	klen, n := binary.Varint(rec)
	if n <= 0 || klen != 4 || len(rec) < n+4 {
		return Marker{}, false
	}
	typ := binary.BigEndian.Uint16(rec[n+2:])
	rec = rec[n+4:]
	vlen, n := binary.Varint(rec)
	if n <= 0 || vlen < 6 || len(rec) < n+6 || typ > 1 {
		return Marker{}, false
	}
	return Marker{
		ProducerID:       int64(binary.BigEndian.Uint64(batch[43:])),
		ProducerEpoch:    int16(binary.BigEndian.Uint16(batch[51:])),
		Commit:           typ == 1,
		CoordinatorEpoch: int32(binary.BigEndian.Uint32(rec[n+2:])),
	}, true
}

// Header fields of a stored batch, for assertions.

// BaseOffset returns the batch's base offset.
func BaseOffset(batch []byte) int64 { return int64(binary.BigEndian.Uint64(batch)) }

// LeaderEpoch returns the batch's partition leader epoch.
func LeaderEpoch(batch []byte) int32 { return int32(binary.BigEndian.Uint32(batch[12:])) }

// Size returns the whole size of the batch starting at b[0].
func Size(b []byte) int { return int(binary.BigEndian.Uint32(b[8:])) + 12 }

// RecordCount returns the number of records in the batch.
func RecordCount(batch []byte) int { return int(binary.BigEndian.Uint32(batch[57:])) }

// ProducerID returns the batch's producer id.
func ProducerID(batch []byte) int64 { return int64(binary.BigEndian.Uint64(batch[43:])) }

// BaseSequence returns the batch's base sequence.
func BaseSequence(batch []byte) int32 { return int32(binary.BigEndian.Uint32(batch[53:])) }

// MaxTimestamp returns the batch's max timestamp.
func MaxTimestamp(batch []byte) int64 { return int64(binary.BigEndian.Uint64(batch[35:])) }

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
