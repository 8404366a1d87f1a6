package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// Record batch v2 header layout (big endian); the package doc of store/log
// draws it.
const (
	offBaseOffset      = 0
	offBatchLength     = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offBaseTimestamp   = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offRecordCount     = 57

	// HeaderSize is the size of the fixed header; the records follow it.
	HeaderSize = 61
	// ScanHeaderSize is the part of the header through maxTimestamp: all
	// that walking a log needs (size, offsets, attributes, timestamps).
	ScanHeaderSize = offProducerID

	// lengthOverhead is the part of a batch not counted by batchLength:
	// baseOffset and batchLength themselves.
	lengthOverhead = 12
	// maxLength bounds batchLength so that the whole size fits an int32.
	maxLength = math.MaxInt32 - lengthOverhead

	attrCompressionMask Attributes = 0x07
	attrLogAppendTime   Attributes = 0x08
	attrTransactional   Attributes = 0x10
	attrControl         Attributes = 0x20
	attrDeleteHorizon   Attributes = 0x40
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Batch views the bytes of one v2 record batch. Accessors read the header
// fields in place; b must hold the fields read (ScanHeaderSize bytes for
// those through MaxTimestamp, HeaderSize for the rest), which ParseHeader
// and Parse check. Setters patch the bytes in place; all fields from
// Attributes on are covered by the CRC, so after setting them call Seal.
type Batch []byte

// ParseHeader checks the header at the start of b, of which only the first
// ScanHeaderSize bytes need be present: a batch length that gives a size
// within int32, magic 2 and a non-negative last offset delta. Structural
// faults are ErrCorruptMessage, another magic is ErrInvalidRecord (a
// produce request may carry only magic 2; that is a rule, not corruption).
// It returns b as a Batch.
func ParseHeader(b []byte) (Batch, error) {
	if len(b) < ScanHeaderSize {
		return nil, fmt.Errorf("%w: batch header truncated (%d bytes)", ErrCorruptMessage, len(b))
	}
	h := Batch(b)
	if length := h.Length(); length < HeaderSize-lengthOverhead || int64(length) > maxLength {
		return nil, fmt.Errorf("%w: batch length %d", ErrCorruptMessage, length)
	}
	if m := h.Magic(); m != 2 {
		return nil, fmt.Errorf("%w: magic %d (only record batch v2 is supported)", ErrInvalidRecord, m)
	}
	if d := h.LastOffsetDelta(); d < 0 {
		return nil, fmt.Errorf("%w: negative last offset delta %d", ErrCorruptMessage, d)
	}
	return h, nil
}

// Parse checks the header of the batch starting at b[0] (see ParseHeader)
// and that the whole batch is present, and returns exactly that batch;
// b[len(result):] is what follows it. It checks neither the CRC (see
// CheckCRC) nor the records (see Records).
func Parse(b []byte) (Batch, error) {
	if len(b) < HeaderSize {
		return nil, fmt.Errorf("%w: %d trailing bytes are not a batch", ErrCorruptMessage, len(b))
	}
	h, err := ParseHeader(b)
	if err != nil {
		return nil, err
	}
	if h.Size() > len(b) {
		return nil, fmt.Errorf("%w: batch of %d bytes, only %d present", ErrCorruptMessage, h.Size(), len(b))
	}
	return h[:h.Size()], nil
}

// BaseOffset is the offset of the first record; the log assigns it.
func (b Batch) BaseOffset() int64 { return int64(binary.BigEndian.Uint64(b[offBaseOffset:])) }

// Length is the batchLength field: the bytes after it.
func (b Batch) Length() int32 { return int32(binary.BigEndian.Uint32(b[offBatchLength:])) }

// Size is the whole size of the batch, Length() + 12.
func (b Batch) Size() int { return int(b.Length()) + lengthOverhead }

// PartitionLeaderEpoch is the leader epoch the log stamped the batch with.
func (b Batch) PartitionLeaderEpoch() int32 {
	return int32(binary.BigEndian.Uint32(b[offLeaderEpoch:]))
}

// Magic is the batch format version, 2.
func (b Batch) Magic() int8 { return int8(b[offMagic]) }

// CRC is the stored CRC-32C of the bytes from Attributes to the end.
func (b Batch) CRC() uint32 { return binary.BigEndian.Uint32(b[offCRC:]) }

// Attributes are the batch's compression codec, timestamp type,
// transactional and control flags.
func (b Batch) Attributes() Attributes {
	return Attributes(binary.BigEndian.Uint16(b[offAttributes:]))
}

// LastOffsetDelta is the offset of the last record minus BaseOffset.
func (b Batch) LastOffsetDelta() int32 {
	return int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
}

// LastOffset is the offset of the last record.
func (b Batch) LastOffset() int64 { return b.BaseOffset() + int64(b.LastOffsetDelta()) }

// BaseTimestamp is the timestamp record timestamp deltas are relative to.
func (b Batch) BaseTimestamp() int64 { return int64(binary.BigEndian.Uint64(b[offBaseTimestamp:])) }

// MaxTimestamp is the largest record timestamp (the append time with
// LogAppendTime).
func (b Batch) MaxTimestamp() int64 { return int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])) }

// ProducerID is the idempotent or transactional producer, -1 for none.
func (b Batch) ProducerID() int64 { return int64(binary.BigEndian.Uint64(b[offProducerID:])) }

// ProducerEpoch is the producer's epoch, -1 for none.
func (b Batch) ProducerEpoch() int16 { return int16(binary.BigEndian.Uint16(b[offProducerEpoch:])) }

// BaseSequence is the producer sequence of the first record, -1 for none.
func (b Batch) BaseSequence() int32 { return int32(binary.BigEndian.Uint32(b[offBaseSequence:])) }

// RecordCount is the number of records.
func (b Batch) RecordCount() int32 { return int32(binary.BigEndian.Uint32(b[offRecordCount:])) }

// RecordBytes is the records section of a whole batch as stored:
// compressed as a whole when Attributes().Compression() is not None.
func (b Batch) RecordBytes() []byte { return b[HeaderSize:] }

// CheckCRC verifies the CRC-32C of a whole batch (as Parse returns it).
func (b Batch) CheckCRC() error {
	want := b.CRC()
	if got := crc32.Checksum(b[offAttributes:], castagnoli); got != want {
		return fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptMessage, want, got)
	}
	return nil
}

// Seal recomputes the CRC of a whole batch after fields it covers changed.
func (b Batch) Seal() {
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
}

// SetBaseOffset patches the base offset; it precedes the CRC, so the CRC
// stays valid.
func (b Batch) SetBaseOffset(o int64) { binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(o)) }

// SetPartitionLeaderEpoch patches the leader epoch; it precedes the CRC,
// so the CRC stays valid.
func (b Batch) SetPartitionLeaderEpoch(e int32) {
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(e))
}

// SetMagic patches the format version (tests use it to build a batch of
// another version).
func (b Batch) SetMagic(m int8) { b[offMagic] = byte(m) }

// SetAttributes patches the attributes; call Seal after.
func (b Batch) SetAttributes(a Attributes) {
	binary.BigEndian.PutUint16(b[offAttributes:], uint16(a))
}

// SetLastOffsetDelta patches the last offset delta; call Seal after.
func (b Batch) SetLastOffsetDelta(d int32) {
	binary.BigEndian.PutUint32(b[offLastOffsetDelta:], uint32(d))
}

// SetRecordCount patches the record count; call Seal after (tests use it
// to build a batch whose count lies).
func (b Batch) SetRecordCount(n int32) {
	binary.BigEndian.PutUint32(b[offRecordCount:], uint32(n))
}

// SetMaxTimestamp patches the max timestamp; call Seal after.
func (b Batch) SetMaxTimestamp(ts int64) {
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(ts))
}

// SetBaseSequence patches the base sequence; call Seal after.
func (b Batch) SetBaseSequence(seq int32) {
	binary.BigEndian.PutUint32(b[offBaseSequence:], uint32(seq))
}

// Attributes is the attributes field of a batch: bits 0-2 the compression
// codec, bit 3 the timestamp type, bit 4 transactional, bit 5 control,
// bit 6 delete horizon.
type Attributes uint16

// Compression is the codec the records are compressed with.
func (a Attributes) Compression() Compression { return Compression(a & attrCompressionMask) }

// TimestampType says whether record timestamps are the producer's or the
// log's append time.
func (a Attributes) TimestampType() TimestampType {
	if a&attrLogAppendTime != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// Transactional reports whether the batch belongs to a transaction.
func (a Attributes) Transactional() bool { return a&attrTransactional != 0 }

// Control reports whether the batch holds control records (transaction
// markers).
func (a Attributes) Control() bool { return a&attrControl != 0 }

// DeleteHorizon reports whether the batch's base timestamp is its delete
// horizon (KIP-534, bit 6): the log cleaner set it when it first kept a
// tombstone or a transaction marker of the batch, and removes those once
// the horizon passed. Record timestamp deltas are relative to it.
func (a Attributes) DeleteHorizon() bool { return a&attrDeleteHorizon != 0 }

// WithDeleteHorizon returns a with the delete horizon flag set to on.
func (a Attributes) WithDeleteHorizon(on bool) Attributes { return a.with(attrDeleteHorizon, on) }

// WithCompression returns a with the codec replaced by c.
func (a Attributes) WithCompression(c Compression) Attributes {
	return a&^attrCompressionMask | Attributes(c)&attrCompressionMask
}

// WithTimestampType returns a with the timestamp type replaced by t.
func (a Attributes) WithTimestampType(t TimestampType) Attributes {
	return a.with(attrLogAppendTime, t == LogAppendTime)
}

// WithTransactional returns a with the transactional flag set to on.
func (a Attributes) WithTransactional(on bool) Attributes { return a.with(attrTransactional, on) }

// WithControl returns a with the control flag set to on.
func (a Attributes) WithControl(on bool) Attributes { return a.with(attrControl, on) }

func (a Attributes) with(bit Attributes, on bool) Attributes {
	if on {
		return a | bit
	}
	return a &^ bit
}

// Compression is a record batch compression codec.
type Compression int8

// The codecs of the attributes' low three bits; 5 to 7 are unassigned.
const (
	None   Compression = 0
	Gzip   Compression = 1
	Snappy Compression = 2
	LZ4    Compression = 3
	Zstd   Compression = 4
)

// Valid reports whether c is a codec Kafka defines.
func (c Compression) Valid() bool { return c >= None && c <= Zstd }

func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Snappy:
		return "snappy"
	case LZ4:
		return "lz4"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("codec %d", int8(c))
}

// TimestampType is the meaning of record timestamps.
type TimestampType int8

const (
	// CreateTime: the producer's timestamps.
	CreateTime TimestampType = 0
	// LogAppendTime: the time the log appended the batch, in MaxTimestamp.
	LogAppendTime TimestampType = 1
)
