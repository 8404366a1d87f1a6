package record

import (
	"encoding/binary"
	"slices"
)

// Builder encodes one v2 record batch: set the header fields, Append the
// records, Build. Length, counts, last offset delta, max timestamp and CRC
// are computed. A Builder can be reused after Reset.
//
// The builder writes what it is given: records are expected in offset
// order with deltas below 2^31, and a batch without records (which the log
// refuses) can be built for tests.
type Builder struct {
	BaseOffset           int64 // 0 for a producer's batch: the log assigns it
	PartitionLeaderEpoch int32 // -1 for a producer's batch
	BaseTimestamp        int64 // ms; record timestamps are deltas from it
	Compression          Compression
	// RawSnappy writes snappy as one raw block instead of the xerial
	// framing the Java client uses; both are read back.
	RawSnappy     bool
	TimestampType TimestampType
	// AppendTime is the max timestamp of a LogAppendTime batch; CreateTime
	// batches compute it from their records.
	AppendTime    int64
	Transactional bool
	Control       bool
	// DeleteHorizon marks BaseTimestamp as the batch's delete horizon
	// (Attributes.DeleteHorizon); record deltas stay relative to it.
	DeleteHorizon bool
	ProducerID    int64 // -1 for none
	ProducerEpoch int16 // -1 for none
	BaseSequence  int32 // -1 for none
	// LastOffsetDelta, when above the last appended record's offset
	// delta, is written instead: a compacted batch keeps its original
	// offset span (and so its producer's last sequence), as Kafka's
	// cleaner keeps the last offset of the batch it filters. A batch
	// without records gets it too.
	LastOffsetDelta int32

	records   []byte // encoded, uncompressed
	count     int32
	lastDelta int32
	maxTs     int64
}

// NewBuilder returns a builder of an uncompressed CreateTime batch at base
// offset 0 without producer (id, epoch and sequence -1) and partition
// leader epoch -1, as a plain producer sends it.
func NewBuilder(baseTimestamp int64) *Builder {
	return &Builder{
		PartitionLeaderEpoch: -1,
		BaseTimestamp:        baseTimestamp,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
	}
}

// Rewrite returns a builder holding the header fields of b (base offset,
// leader epoch, base timestamp, attributes, producer) and no records:
// appending a subset of b's records, with their own offset and timestamp
// deltas, and building gives b with only those records, compressed as b
// was, its last offset delta kept (see LastOffsetDelta). This is what log
// compaction does to a batch.
func (b Batch) Rewrite() *Builder {
	a := b.Attributes()
	nb := &Builder{
		BaseOffset:           b.BaseOffset(),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
		BaseTimestamp:        b.BaseTimestamp(),
		Compression:          a.Compression(),
		TimestampType:        a.TimestampType(),
		Transactional:        a.Transactional(),
		Control:              a.Control(),
		DeleteHorizon:        a.DeleteHorizon(),
		ProducerID:           b.ProducerID(),
		ProducerEpoch:        b.ProducerEpoch(),
		BaseSequence:         b.BaseSequence(),
		LastOffsetDelta:      b.LastOffsetDelta(),
	}
	if nb.TimestampType == LogAppendTime {
		nb.AppendTime = b.MaxTimestamp()
	}
	return nb
}

// Append adds a record with its offset and timestamp deltas as given.
func (b *Builder) Append(r Record) {
	size := 1 + varintLen(r.TimestampDelta) + varintLen(int64(r.OffsetDelta)) +
		bytesLen(r.Key) + bytesLen(r.Value) + max(len(r.Headers), 1)
	b.records = binary.AppendVarint(b.records, int64(size))
	b.records = append(b.records, byte(r.Attributes))
	b.records = binary.AppendVarint(b.records, r.TimestampDelta)
	b.records = binary.AppendVarint(b.records, int64(r.OffsetDelta))
	b.records = appendBytes(b.records, r.Key)
	b.records = appendBytes(b.records, r.Value)
	if len(r.Headers) == 0 {
		b.records = append(b.records, 0) // header count 0
	} else {
		b.records = append(b.records, r.Headers...)
	}
	ts := b.BaseTimestamp + r.TimestampDelta
	if b.count == 0 || ts > b.maxTs {
		b.maxTs = ts
	}
	b.count++
	b.lastDelta = r.OffsetDelta
}

// Len is the number of records appended.
func (b *Builder) Len() int { return int(b.count) }

// Reset drops the records, keeping the header fields.
func (b *Builder) Reset() {
	b.records, b.count, b.lastDelta, b.maxTs = b.records[:0], 0, 0, 0
}

// Build returns the batch. It fails only for a codec that is not Valid or
// a compressor error.
func (b *Builder) Build() (Batch, error) { return b.AppendTo(nil) }

// AppendTo appends the batch to dst.
func (b *Builder) AppendTo(dst []byte) ([]byte, error) {
	body := b.records
	if b.Compression != None {
		var err error
		if body, err = compress(b.Compression, b.RawSnappy, b.records); err != nil {
			return dst, err
		}
	}
	return b.appendBatch(dst, body), nil
}

// AppendRaw appends a batch whose records section is body, taken as it
// is (as compressed with b.Compression), in place of the records
// appended; count, last offset delta and max timestamp still come from
// those. Tests use it to build batches no client would: garbage or
// oversized compressed data.
func (b *Builder) AppendRaw(dst, body []byte) []byte { return b.appendBatch(dst, body) }

// appendBatch appends the header and the records section body to dst.
func (b *Builder) appendBatch(dst, body []byte) []byte {
	a := Attributes(0).WithCompression(b.Compression).WithTimestampType(b.TimestampType).
		WithTransactional(b.Transactional).WithControl(b.Control).WithDeleteHorizon(b.DeleteHorizon)
	maxTs := b.BaseTimestamp
	if b.count > 0 {
		maxTs = b.maxTs
	}
	if b.TimestampType == LogAppendTime {
		maxTs = b.AppendTime
	}
	start := len(dst)
	dst = slices.Grow(dst, HeaderSize+len(body))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseOffset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(HeaderSize-lengthOverhead+len(body)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
	dst = append(dst, 2)                        // magic
	dst = binary.BigEndian.AppendUint32(dst, 0) // crc, sealed below
	dst = binary.BigEndian.AppendUint16(dst, uint16(a))
	dst = binary.BigEndian.AppendUint32(dst, uint32(max(b.lastDelta, b.LastOffsetDelta)))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(maxTs))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.ProducerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.ProducerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.BaseSequence))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.count))
	dst = append(dst, body...)
	Batch(dst[start:]).Seal()
	return dst
}

// appendBytes appends a length-prefixed field, nil as length -1.
func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func bytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

// varintLen is the size of x as a zig-zag varint.
func varintLen(x int64) int {
	ux := uint64(x)<<1 ^ uint64(x>>63)
	n := 1
	for ux >= 0x80 {
		ux >>= 7
		n++
	}
	return n
}
